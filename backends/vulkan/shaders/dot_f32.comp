#version 450
#extension GL_GOOGLE_include_directive : require
#define T float
#define S float
#include "dot.glsl"
