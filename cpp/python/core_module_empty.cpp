// _core's own source, empty: its code is the two static libraries it links whole, _core_glue and
// _core_hot (cpp/CMakeLists.txt), and a CMake target needs a source of its own.
