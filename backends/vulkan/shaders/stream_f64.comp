#version 450
#extension GL_GOOGLE_include_directive : require
#define T double
#define S double
#include "stream.glsl"
