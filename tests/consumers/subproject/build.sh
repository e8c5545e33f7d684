meson setup build
meson compile -C build
./build/consumer
