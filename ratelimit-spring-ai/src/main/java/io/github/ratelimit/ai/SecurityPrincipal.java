package io.github.ratelimit.ai;

import java.security.Principal;

import org.jspecify.annotations.Nullable;

import org.springframework.security.authentication.AnonymousAuthenticationToken;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.context.SecurityContextHolder;
import org.springframework.util.ClassUtils;

/**
 * The authenticated user of the thread that calls the model, as Spring Security holds it: what {@code #principal} is
 * outside of an HTTP request (anonymous is none). Loaded only where Spring Security is on the class path.
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
