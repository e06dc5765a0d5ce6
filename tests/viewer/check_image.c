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
 *     more than 24 of 255 in some channel;
 *   check_image --overlay FILE.png EDGE MIN_TEXT_FRACTION
 *     a picture of a scene without a ground (the background, (36, 38, 46), behind the overlay):
 *     the overlay is there (its dark box, 55% black over the background: every channel under 28,
 *     just inside its top left corner at (9, 9)), its text (light grey: every channel over 190,
 *     within 40 of each other) covers at least that fraction of the picture, and neither box nor
 *     text reaches the EDGE pixels along the right and bottom edges (nothing runs off them). */
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

static int check_overlay(char **argv)
{
    int w = 0, h = 0;
    unsigned char *pixels = load(argv[2], &w, &h);
    if (!pixels) return 1;
    const int edge = atoi(argv[3]);
    long text = 0, box_at_edge = 0, text_at_edge = 0;
    int right = -1, bottom = -1; // the rightmost column and the lowest row of box or text
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            const unsigned char *c = pixels + 3 * ((long)y * w + x);
            const int max = c[0] > c[1] ? (c[0] > c[2] ? c[0] : c[2]) : (c[1] > c[2] ? c[1] : c[2]);
            const int min = c[0] < c[1] ? (c[0] < c[2] ? c[0] : c[2]) : (c[1] < c[2] ? c[1] : c[2]);
            const bool is_box = max < 28, is_text = min > 190 && max - min < 40;
            if (!is_box && !is_text) continue;
            text += is_text;
            if (x > right) right = x;
            if (y > bottom) bottom = y;
            if (x >= w - edge || y >= h - edge) box_at_edge += is_box, text_at_edge += is_text;
        }
    const unsigned char *corner = pixels + 3 * (9L * w + 9);
    const bool box_there = w > 9 && h > 9 && corner[0] < 28 && corner[1] < 28 && corner[2] < 28;
    stbi_image_free(pixels);
    const double fraction = (double)text / ((double)w * h);
    printf("check_image: %s: %dx%d, overlay box %s, text over %.2f%% of the picture; box or text as far as column %d "
           "and row %d; %ld box and %ld text pixels within %d of the right and bottom edges\n",
           argv[2], w, h, box_there ? "there" : "missing", 100.0 * fraction, right, bottom, box_at_edge, text_at_edge, edge);
    const bool ok = box_there && fraction >= atof(argv[4]) && box_at_edge == 0 && text_at_edge == 0;
    if (!ok) printf("check_image: expected the box, a text fraction of at least %s and nothing within %d of the edges\n", argv[4], edge);
    return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc == 8 && strcmp(argv[1], "--colour") == 0) return check_colour(argv);
    if (argc == 5 && strcmp(argv[1], "--differ") == 0) return check_differ(argv);
    if (argc == 5 && strcmp(argv[1], "--overlay") == 0) return check_overlay(argv);
    if (argc != 5 || argv[1][0] == '-') {
        fprintf(stderr, "usage: check_image FILE.png MIN_FRACTION MAX_FRACTION MIN_HUES\n"
                        "       check_image --colour FILE.png R G B MIN_FRACTION MAX_FRACTION\n"
                        "       check_image --differ A.png B.png MIN_FRACTION\n"
                        "       check_image --overlay FILE.png EDGE MIN_TEXT_FRACTION\n");
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
