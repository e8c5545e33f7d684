I="-I$ROSTER/include -I$ROSTER/backends/cpu/include -I$ROSTER/backends/cuda/include"
I="$I -I$ROSTER/backends/opencl/include -I$ROSTER/backends/vulkan/include"
g++ -std=c++20 -O2 $I main.cpp -o one_file_gcc -pthread -ldl
clang++ -std=c++20 -O2 $I main.cpp -o one_file_clang -pthread -ldl
./one_file_gcc cpu:0 vulkan:0 opencl:0
./one_file_clang cpu:0 vulkan:0 opencl:0
