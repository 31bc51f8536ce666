package io.github.ratelimit.webflux;

import io.github.ratelimit.web.RateLimitStatus;
import reactor.core.publisher.Mono;

import org.springframework.core.MethodParameter;
import org.springframework.web.reactive.BindingContext;
import org.springframework.web.reactive.result.method.HandlerMethodArgumentResolver;
import org.springframework.web.server.ServerWebExchange;

/**
 * Resolves WebFlux handler method parameters of type {@link RateLimitStatus}: a view of the exchange's limits, read
 * when asked, so that the method's body sees the limits decided when its result was subscribed to.
 *
 * @since 0.2.0
 */
public final class RateLimitStatusArgumentResolver implements HandlerMethodArgumentResolver {

	@Override
	public boolean supportsParameter(MethodParameter parameter) {
		return parameter.getParameterType() == RateLimitStatus.class;
	}

	@Override
	public Mono<Object> resolveArgument(MethodParameter parameter, BindingContext bindingContext,
			ServerWebExchange exchange) {
		return Mono.just(RateLimitStatus.of(ExchangeRateLimitRequest.of(exchange)));
	}

}
