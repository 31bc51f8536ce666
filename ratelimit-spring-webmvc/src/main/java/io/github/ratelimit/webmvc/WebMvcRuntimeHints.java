package io.github.ratelimit.webmvc;

import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;

import org.springframework.aot.hint.MemberCategory;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;

/**
 * What key and cost expressions call on Spring MVC, for native images: the public methods of {@code #request}, the
 * {@link HttpServletRequest}. Registered in {@code META-INF/spring/aot.factories}.
 */
class WebMvcRuntimeHints implements RuntimeHintsRegistrar {

	@Override
	public void registerHints(RuntimeHints hints, @Nullable ClassLoader classLoader) {
		hints.reflection().registerType(HttpServletRequest.class, MemberCategory.INVOKE_PUBLIC_METHODS);
	}

}
