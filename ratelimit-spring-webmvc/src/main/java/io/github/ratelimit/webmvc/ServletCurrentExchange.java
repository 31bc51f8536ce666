package io.github.ratelimit.webmvc;

import io.github.ratelimit.engine.CurrentExchange;
import io.github.ratelimit.engine.RateLimitExchange;
import org.jspecify.annotations.Nullable;

import org.springframework.web.context.request.RequestAttributes;
import org.springframework.web.context.request.RequestContextHolder;
import org.springframework.web.context.request.ServletRequestAttributes;

/**
 * The request Spring MVC serves on this thread ({@link RequestContextHolder}), for {@code @RateLimited} methods.
 *
 * @since 0.2.0
 */
public final class ServletCurrentExchange implements CurrentExchange {

	@Override
	public @Nullable RateLimitExchange get() {
		RequestAttributes attributes = RequestContextHolder.getRequestAttributes();
		if (attributes instanceof ServletRequestAttributes servlet) {
			return ServletRateLimitRequest.of(servlet.getRequest(), servlet.getResponse());
		}
		return null;
	}

}
