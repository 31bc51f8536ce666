package io.github.ratelimit.grpc;

import java.security.Principal;

import org.jspecify.annotations.Nullable;

import org.springframework.security.authentication.AnonymousAuthenticationToken;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.context.SecurityContextHolder;
import org.springframework.util.ClassUtils;

/**
 * The authenticated user of the current call, as Spring gRPC's security interceptors hold it while the call starts
 * and while its listener runs: what {@code #principal} is (anonymous is none). Loaded only where Spring Security is on
 * the class path.
 */
final class SecurityPrincipal {

	private static final boolean PRESENT = ClassUtils.isPresent(
			"org.springframework.security.core.context.SecurityContextHolder",
			SecurityPrincipal.class.getClassLoader());

	private SecurityPrincipal() {
	}

	static @Nullable Principal current() {
		return PRESENT ? Holder.current() : null;
	}

	/** Apart, so that nothing of Spring Security is loaded without it. */
	private static final class Holder {

		static @Nullable Principal current() {
			Authentication authentication = SecurityContextHolder.getContext().getAuthentication();
			return (authentication != null && authentication.isAuthenticated()
					&& !(authentication instanceof AnonymousAuthenticationToken)) ? authentication : null;
		}

	}

}
