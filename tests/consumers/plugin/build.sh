mkdir -p plugins
c++ -std=c++20 -O2 -shared -fPIC -fno-gnu-unique toy_plugin.cpp -o plugins/libroster_toy_plugin.so \
    $(pkg-config --cflags --libs roster)
c++ -std=c++20 -O2 host.cpp -o host $(pkg-config --cflags --libs roster) $(pkg-config --variable=rpath roster)
ROSTER_PLUGIN_PATH=$PWD/plugins ./host
