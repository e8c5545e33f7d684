// The fixture odr_symbols.sh must reject: roster state in an unnamed
// namespace, used by an inline function (one copy per unit).
namespace roster {
namespace {
int counter = 0;
}  // namespace
inline int bump() { return ++counter; }
int use_bump() { return bump(); }
}  // namespace roster
