c++ -std=c++20 -O2 stream.cpp -o stream $(pkg-config --cflags --libs roster roster-cpu) \
    $(pkg-config --variable=rpath roster)
./stream
