package io.github.ratelimit.webflux;

import java.security.Principal;

import reactor.core.publisher.Mono;

import org.springframework.security.authentication.AnonymousAuthenticationToken;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.context.ReactiveSecurityContextHolder;
import org.springframework.security.core.context.SecurityContext;
import org.springframework.util.ClassUtils;

/**
 * The authenticated user of the current reactive request, as Spring Security holds it in the Reactor context: what
 * {@code #principal} is on the method layer, as {@code getUserPrincipal()} is on Spring MVC (anonymous is none).
 * Loaded only where Spring Security is on the class path.
 */
final class SecurityPrincipal {

	private static final boolean PRESENT = ClassUtils.isPresent(
			"org.springframework.security.core.context.ReactiveSecurityContextHolder",
			SecurityPrincipal.class.getClassLoader());

	private SecurityPrincipal() {
	}

	/** The current user, or empty when anonymous or without Spring Security. */
	static Mono<Principal> current() {
		return PRESENT ? Holder.current() : Mono.empty();
	}

	/** Apart, so that nothing of Spring Security is loaded without it. */
	private static final class Holder {

		static Mono<Principal> current() {
			return ReactiveSecurityContextHolder.getContext()
				.mapNotNull(SecurityContext::getAuthentication)
				.filter((authentication) -> authentication.isAuthenticated()
						&& !(authentication instanceof AnonymousAuthenticationToken))
				.map(Authentication.class::cast);
		}

	}

}
