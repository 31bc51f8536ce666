package io.github.ratelimit.aop;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

/**
 * What one plan changes of one policy; {@code null} keeps the policy's value.
 *
 * @param limit the limit
 * @param window the window
 * @param burst the burst
 * @since 0.2.0
 */
public record PlanOverride(@Nullable Long limit, @Nullable Duration window, @Nullable Long burst) {
}
