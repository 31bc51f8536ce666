/**
 * The {@code ratelimits} actuator endpoint, which the auto-configuration declares when the application has Spring
 * Boot Actuator.
 */
@NullMarked
package io.github.ratelimit.actuate;

import org.jspecify.annotations.NullMarked;
