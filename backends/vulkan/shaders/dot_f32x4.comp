#version 450
#extension GL_GOOGLE_include_directive : require
#define T vec4
#define S float
#include "dot.glsl"
