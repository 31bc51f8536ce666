package io.github.ratelimit.aop;

import io.github.ratelimit.engine.CurrentExchange;
import io.github.ratelimit.engine.RateLimitEngine;
import io.github.ratelimit.engine.RateLimitExchange;
import io.github.ratelimit.engine.RateLimitOutcome;
import io.github.ratelimit.web.RateLimitRequest;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;

import org.springframework.aop.support.AopUtils;
import org.springframework.web.ErrorResponseException;

/**
 * Rate limits an invocation of a {@code @RateLimited} method: has the engine decide it for the current request, sets
 * the outcome's headers on the response, then proceeds or throws the rejection (which the web stack's error handling
 * renders as a {@code 429} problem). It decides nothing itself.
 * <p>
 * Policies that count by outcome are settled from the status the client gets when the web stack knows it (Spring MVC:
 * the rate limit filter, at the end of the request), else from what the method returned or threw. Costs known after
 * the response are settled when the method returns or throws, or, for a result the web stack serves later (an
 * {@code SseEmitter}, a {@code StreamingResponseBody}, a {@code DeferredResult}), when the request completes, however
 * it ends (completed, failed, timed out, the client gone), from what the handler reported by then.
 *
 * @since 0.1.0
 */
public final class RateLimitInterceptor implements MethodInterceptor {

	private final RateLimitEngine engine;

	private final CurrentExchange currentExchange;

	/**
	 * Create an interceptor.
	 * @param engine the engine that decides
	 * @param currentExchange the request being served, as the web stack knows it
	 * @since 0.2.0
	 */
	public RateLimitInterceptor(RateLimitEngine engine, CurrentExchange currentExchange) {
		this.engine = engine;
		this.currentExchange = currentExchange;
	}

	@Override
	public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
		if (DecidedInvocations.take(invocation.getMethod())) {
			return invocation.proceed(); // an entry point of its own (an MCP tool call) decided this call
		}
		Object target = invocation.getThis();
		Class<?> targetClass = (target != null) ? AopUtils.getTargetClass(target)
				: invocation.getMethod().getDeclaringClass();
		RateLimitExchange exchange = this.currentExchange.get();
		RateLimitRequest request = (exchange != null) ? exchange.request() : null;
		RateLimitOutcome outcome = this.engine.decideMethod(invocation.getMethod(), targetClass,
				invocation.getArguments(), request);
		if (outcome == null) {
			return invocation.proceed();
		}
		if (exchange != null && !outcome.headers().isEmpty()) {
			exchange.setResponseHeaders(outcome.headers());
		}
		ErrorResponseException rejection = outcome.rejection();
		if (rejection != null) {
			throw rejection;
		}
		Object result = null;
		Throwable failure = null;
		try {
			result = invocation.proceed();
			return result;
		}
		catch (Throwable ex) {
			failure = ex;
			throw ex;
		}
		finally {
			if (failure == null && exchange != null && exchange.completesLater(result)) {
				// What it costs is reported while the response is served, and what it counts is known after.
				this.engine.settlement().settleWhenRequestCompletes(outcome, request, invocation.getMethod(), result);
			}
			else {
				this.engine.settlement().settle(outcome, request, invocation.getMethod(), result, failure);
			}
		}
	}

}
