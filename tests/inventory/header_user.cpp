// One more translation unit that includes the header with a submission.
#include "header_entry.hpp"
