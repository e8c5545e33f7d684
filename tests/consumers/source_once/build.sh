c++ -std=c++20 -O2 -I"$ROSTER/include" -I"$ROSTER/backends/cpu/include" -c roster.cpp
c++ -std=c++20 -O2 -I"$ROSTER/include" -I"$ROSTER/backends/cpu/include" -c main.cpp
c++ -std=c++20 -O2 -I"$ROSTER/include" -I"$ROSTER/backends/cpu/include" -c stream.cpp
c++ main.o stream.o roster.o -o stream -pthread -ldl
./stream
