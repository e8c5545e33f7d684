g++ -std=c++20 -O2 -Iinclude -Ibackends/cpu/include -Ibackends/vulkan/include -Ibackends/opencl/include \
    examples/stream.cpp roster.cpp -o stream -pthread -ldl
./stream vulkan:0 && ./stream opencl:0
