package io.github.ratelimit.actuate;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.EndpointAccessResolver;
import org.springframework.boot.actuate.endpoint.EndpointId;
import org.springframework.util.ClassUtils;

/**
 * Says at start-up that the {@code ratelimits} endpoint's writes (resets, unlocks of locked-out clients, changes of
 * policies) are granted while nothing authenticates them: without Spring Security, whoever reaches the endpoint can
 * make them, anonymously.
 *
 * @since 0.5.0
 */
public final class OpenWritesWarning {

	private static final Log logger = LogFactory.getLog(RateLimitsEndpoint.class);

	private OpenWritesWarning() {
	}

	/**
	 * Warn if the endpoint's writes are granted and Spring Security is not on the class path.
	 * @param access the endpoints' access, as configured
	 * @param classLoader the application's class loader
	 * @return whether it warned
	 */
	public static boolean warnIfOpen(EndpointAccessResolver access, @Nullable ClassLoader classLoader) {
		if (access.accessFor(EndpointId.of("ratelimits"), Access.READ_ONLY) != Access.UNRESTRICTED
				|| ClassUtils.isPresent("org.springframework.security.core.Authentication", classLoader)) {
			return false;
		}
		logger.warn("The ratelimits endpoint's writes are granted (management.endpoint.ratelimits.access="
				+ "unrestricted) and Spring Security is not on the class path: whoever reaches the endpoint can reset "
				+ "keys, unlock locked-out clients and change limits, anonymously. Secure it, or keep it read-only.");
		return true;
	}

}
