/* SPDX-License-Identifier: MIT
 * nbsim — colormaps. Polynomial fits: viridis by Matt Zucker (2020, least squares on the
 * matplotlib table), turbo by Anton Mikhailov / Ruofei Du (Google, 2019). Both stay within a
 * few 1/255 of the tables, so they are evaluated once into a texture. */
#include "colormap.h"

static float clamp01(float x) {
    return x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x);
}

static void viridis(float t, float rgb[3]) {
    static const float c[7][3] = {{0.2777273272234177f, 0.005407344544966578f, 0.3340998053353061f},
                                  {0.1050930431085774f, 1.404613529898575f, 1.384590162594685f},
                                  {-0.3308618287255563f, 0.214847559468213f, 0.09509516302823659f},
                                  {-4.634230498983486f, -5.799100973351585f, -19.33244095627987f},
                                  {6.228269936347081f, 14.17993336680509f, 56.69055260068105f},
                                  {4.776384997670288f, -13.74514537774601f, -65.35303263337234f},
                                  {-5.435455855934631f, 4.645852612178535f, 26.3124352495832f}};
    for (int k = 0; k < 3; ++k) {
        float v = c[6][k];
        for (int i = 5; i >= 0; --i) {
            v = c[i][k] + t * v;
        }
        rgb[k] = clamp01(v);
    }
}

static void turbo(float t, float rgb[3]) {
    static const float c[6][3] = {
        {0.13572138f, 0.09140261f, 0.10667330f},      {4.61539260f, 2.19418839f, 12.64194608f},
        {-42.66032258f, 4.84296658f, -60.58204836f},  {132.13108234f, -14.18503333f, 110.36276771f},
        {-152.94239396f, 4.27729857f, -89.90310912f}, {59.28637943f, 2.82956604f, 27.34824973f}};
    for (int k = 0; k < 3; ++k) {
        float v = c[5][k];
        for (int i = 4; i >= 0; --i) {
            v = c[i][k] + t * v;
        }
        rgb[k] = clamp01(v);
    }
}

void render_colormap_eval(render_colormap map, float t, float rgb[3]) {
    t = clamp01(t);
    if (map == RENDER_COLORMAP_TURBO) {
        turbo(t, rgb);
    } else {
        viridis(t, rgb);
    }
}

GLuint render_colormap_texture(void) {
    unsigned char texels[RENDER_COLORMAP_COUNT][RENDER_COLORMAP_SIZE][3];
    for (int m = 0; m < RENDER_COLORMAP_COUNT; ++m) {
        for (int i = 0; i < RENDER_COLORMAP_SIZE; ++i) {
            float rgb[3];
            render_colormap_eval((render_colormap)m, (float)i / (RENDER_COLORMAP_SIZE - 1), rgb);
            for (int k = 0; k < 3; ++k) {
                texels[m][i][k] = (unsigned char)(rgb[k] * 255.0f + 0.5f);
            }
        }
    }
    GLuint tex = 0;
    glGenTextures(1, &tex);
    glBindTexture(GL_TEXTURE_2D, tex);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_RGB8, RENDER_COLORMAP_SIZE, RENDER_COLORMAP_COUNT, 0, GL_RGB,
                 GL_UNSIGNED_BYTE, texels);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
    glBindTexture(GL_TEXTURE_2D, 0);
    return tex;
}

float render_colormap_row_coord(int map) {
    return ((float)map + 0.5f) / (float)RENDER_COLORMAP_COUNT;
}
