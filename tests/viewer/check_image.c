/* Checks that a screenshot shows objects: the fraction of its pixels in saturated colours (the
 * palette of the objects; background, ground and text are grey) lies in [min, max], and those
 * pixels spread over at least `hues` of 12 hue bins (many objects, not one smear).
 *   check_image FILE.png MIN_FRACTION MAX_FRACTION MIN_HUES */
#define STB_IMAGE_IMPLEMENTATION
#include <stb_image.h>

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: check_image FILE.png MIN_FRACTION MAX_FRACTION MIN_HUES\n");
        return 2;
    }
    int w = 0, h = 0, channels = 0;
    unsigned char *pixels = stbi_load(argv[1], &w, &h, &channels, 3);
    if (!pixels) {
        fprintf(stderr, "check_image: cannot read %s: %s\n", argv[1], stbi_failure_reason());
        return 1;
    }
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
