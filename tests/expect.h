/* EXPECT(call, status, words...): the call returns `status`, tx_last_error
 * contains each of the words, and no GL error escaped. Needs a `ctx` in scope
 * (and harness.h, internal.h included before). */
#ifndef TX_TEST_EXPECT_H
#define TX_TEST_EXPECT_H

#define EXPECT(call, status, ...)                                                              \
    do {                                                                                       \
        tx_status s_ = (call);                                                                 \
        CHECK(s_ == (status), "%s returned %s, want %s (%s)", #call, tx_status_name(s_),       \
              tx_status_name(status), tx_last_error(ctx));                                     \
        const char *needles_[] = {__VA_ARGS__};                                                \
        for (size_t i_ = 0; i_ < sizeof needles_ / sizeof needles_[0]; i_++)                   \
            CHECK(strstr(tx_last_error(ctx), needles_[i_]) != NULL,                            \
                  "%s: message \"%s\" lacks \"%s\"", #call, tx_last_error(ctx), needles_[i_]); \
        CHECK(tx_gl_error() == 0, "a GL error escaped %s", #call);                             \
    } while (0)

#endif
