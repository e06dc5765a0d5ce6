/* Checks screenshots of the viewer.
 *   check_image FILE.png MIN_FRACTION MAX_FRACTION MIN_HUES
 *     the fraction of its pixels in saturated colours (the palette of the objects; background,
 *     ground and text are grey) lies in [min, max], and those pixels spread over at least `hues`
 *     of 12 hue bins (many objects, not one smear);
 *   check_image --colour FILE.png R G B MIN_FRACTION MAX_FRACTION
 *     the fraction of its pixels of the colour (R, G, B) (in [0, 1]) under any diffuse shading
 *     lies in [min, max]: pixels at least 0.1 bright whose channels divided by the brightest one
 *     are each within 0.04 of the colour's (a lit surface scales its colour);
 *   check_image --differ A.png B.png MIN_FRACTION
 *     at least that fraction of the pixels differ between the two pictures of the same size by
 *     more than 24 of 255 in some channel. */
#define STB_IMAGE_IMPLEMENTATION
#include <stb_image.h>

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned char *load(const char *path, int *w, int *h)
{
    int channels = 0;
    unsigned char *pixels = stbi_load(path, w, h, &channels, 3);
    if (!pixels) fprintf(stderr, "check_image: cannot read %s: %s\n", path, stbi_failure_reason());
    return pixels;
}

static int check_colour(char **argv)
{
    int w = 0, h = 0;
    unsigned char *pixels = load(argv[2], &w, &h);
    if (!pixels) return 1;
    const double want[3] = {atof(argv[3]), atof(argv[4]), atof(argv[5])};
    const double want_max = fmax(want[0], fmax(want[1], want[2]));
    long matching = 0;
    for (long i = 0; i < (long)w * h; i++) {
        const double c[3] = {pixels[3 * i] / 255.0, pixels[3 * i + 1] / 255.0, pixels[3 * i + 2] / 255.0};
        const double max = fmax(c[0], fmax(c[1], c[2]));
        if (max < 0.1 || want_max <= 0.0) continue;
        bool match = true;
        for (int k = 0; k < 3; k++) match = match && fabs(c[k] / max - want[k] / want_max) <= 0.04;
        matching += match;
    }
    stbi_image_free(pixels);
    const double fraction = (double)matching / ((double)w * h);
    printf("check_image: %s: %dx%d, %.2f%% of the pixels in the colour (%s, %s, %s)\n", argv[2], w, h, 100.0 * fraction,
           argv[3], argv[4], argv[5]);
    const bool ok = fraction >= atof(argv[6]) && fraction <= atof(argv[7]);
    if (!ok) printf("check_image: expected a fraction in [%s, %s]\n", argv[6], argv[7]);
    return ok ? 0 : 1;
}

static int check_differ(char **argv)
{
    int w = 0, h = 0, w2 = 0, h2 = 0;
    unsigned char *a = load(argv[2], &w, &h), *b = load(argv[3], &w2, &h2);
    if (!a || !b || w != w2 || h != h2) {
        if (a && b) fprintf(stderr, "check_image: %s is %dx%d but %s is %dx%d\n", argv[2], w, h, argv[3], w2, h2);
        stbi_image_free(a), stbi_image_free(b);
        return 1;
    }
    long differing = 0;
    for (long i = 0; i < (long)w * h; i++) {
        bool differs = false;
        for (int k = 0; k < 3; k++) differs = differs || abs((int)a[3 * i + k] - (int)b[3 * i + k]) > 24;
        differing += differs;
    }
    stbi_image_free(a), stbi_image_free(b);
    const double fraction = (double)differing / ((double)w * h);
    printf("check_image: %s and %s: %.2f%% of the pixels differ\n", argv[2], argv[3], 100.0 * fraction);
    const bool ok = fraction >= atof(argv[4]);
    if (!ok) printf("check_image: expected at least a fraction %s to differ\n", argv[4]);
    return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc == 8 && strcmp(argv[1], "--colour") == 0) return check_colour(argv);
    if (argc == 5 && strcmp(argv[1], "--differ") == 0) return check_differ(argv);
    if (argc != 5 || argv[1][0] == '-') {
        fprintf(stderr, "usage: check_image FILE.png MIN_FRACTION MAX_FRACTION MIN_HUES\n"
                        "       check_image --colour FILE.png R G B MIN_FRACTION MAX_FRACTION\n"
                        "       check_image --differ A.png B.png MIN_FRACTION\n");
        return 2;
    }
    int w = 0, h = 0;
    unsigned char *pixels = load(argv[1], &w, &h);
    if (!pixels) return 1;
    long coloured = 0, bins[12] = {0};
    for (long i = 0; i < (long)w * h; i++) {
        const double r = pixels[3 * i] / 255.0, g = pixels[3 * i + 1] / 255.0, b = pixels[3 * i + 2] / 255.0;
        const double max = fmax(r, fmax(g, b)), min = fmin(r, fmin(g, b));
        if (max < 0.15 || (max - min) / max < 0.35) continue; // dark or grey
        coloured++;
        double hue = max == r ? (g - b) / (max - min) : max == g ? 2.0 + (b - r) / (max - min) : 4.0 + (r - g) / (max - min);
        hue = fmod(hue + 6.0, 6.0);
        bins[(int)(hue * 2.0) % 12]++;
    }
    int hues = 0;
    for (int k = 0; k < 12; k++) hues += bins[k] > 0.002 * coloured;
    const double fraction = (double)coloured / ((double)w * h);
    printf("check_image: %s: %dx%d, %.1f%% of the pixels in object colours, %d hue bins\n", argv[1], w, h, 100.0 * fraction, hues);
    stbi_image_free(pixels);
    const bool ok = fraction >= atof(argv[2]) && fraction <= atof(argv[3]) && hues >= atoi(argv[4]);
    if (!ok) printf("check_image: expected a fraction in [%s, %s] and at least %s hue bins\n", argv[2], argv[3], argv[4]);
    return ok ? 0 : 1;
}
