c++ -std=c++20 -O2 -DROSTER_HEADER_ONLY -I"$ROSTER/include" -I"$ROSTER/backends/cpu/include" \
    main.cpp -o stream -pthread -ldl
./stream
