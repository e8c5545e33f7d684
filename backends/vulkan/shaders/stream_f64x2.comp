#version 450
#extension GL_GOOGLE_include_directive : require
#define T dvec2
#define S double
#include "stream.glsl"
