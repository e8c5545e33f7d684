cp /path/to/roster/roster.wrap subprojects/   # then set url in it
meson setup build
meson compile -C build
./build/stream
