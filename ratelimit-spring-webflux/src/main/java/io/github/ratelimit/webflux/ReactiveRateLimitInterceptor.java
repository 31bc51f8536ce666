package io.github.ratelimit.webflux;

import java.lang.reflect.Method;
import java.util.List;

import io.github.ratelimit.annotation.RateLimited;
import io.github.ratelimit.engine.InvalidRateLimitPolicyException;
import io.github.ratelimit.engine.RateLimitEngine;
import io.github.ratelimit.engine.RateLimitExchange;
import io.github.ratelimit.engine.RateLimitOutcome;
import io.github.ratelimit.engine.RateLimitedMethods;
import io.github.ratelimit.web.RateLimitRequest;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.aop.ProxyMethodInvocation;
import org.springframework.aop.support.AopUtils;
import org.springframework.core.ReactiveAdapter;
import org.springframework.core.ReactiveAdapterRegistry;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;
import org.springframework.web.ErrorResponseException;

/**
 * Rate limits an invocation of a {@code @RateLimited} method that returns a reactive type ({@code Mono},
 * {@code Flux}, or any type Spring's {@link ReactiveAdapterRegistry} adapts): decided when the result is subscribed
 * to, as Spring's {@code @Retryable} does for reactive types, by the engine's non-blocking decision, for the request
 * the {@link RateLimitWebFilter} handed down. An admitted invocation proceeds with the outcome's headers on the
 * response; a rejected one never proceeds, and its result fails with the rejection, which the web stack's error
 * handling renders as a {@code 429} problem.
 * <p>
 * A rate limited method that returns a plain value fails the application's start-up ({@link #checkReturnTypes}): its
 * limits could be decided only by blocking the event loop, without the request.
 *
 * @since 0.2.0
 */
public final class ReactiveRateLimitInterceptor implements MethodInterceptor {

	private final RateLimitEngine engine;

	private final ReactiveAdapterRegistry adapters;

	/**
	 * Create an interceptor.
	 * @param engine the engine that decides
	 */
	public ReactiveRateLimitInterceptor(RateLimitEngine engine) {
		this.engine = engine;
		this.adapters = ReactiveAdapterRegistry.getSharedInstance();
	}

	@Override
	public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
		Method method = invocation.getMethod();
		ReactiveAdapter adapter = this.adapters.getAdapter(method.getReturnType());
		if (adapter == null) {
			// checkReturnTypes refused such a method at start-up; a bean it could not see fails here
			throw new IllegalStateException(notReactive(ClassUtils.getUserClass(method.getDeclaringClass()), method));
		}
		Object target = invocation.getThis();
		Class<?> targetClass = (target != null) ? AopUtils.getTargetClass(target) : method.getDeclaringClass();
		MethodInvocation deferred = (invocation instanceof ProxyMethodInvocation proxied) ? proxied.invocableClone()
				: invocation;
		Flux<Object> limited = Flux.deferContextual((context) -> {
			RateLimitRequest request = RateLimitWebFilter.request(context);
			Mono<?> principal = (request instanceof ExchangeRateLimitRequest exchange)
					? SecurityPrincipal.current().doOnNext(exchange::setPrincipal) : Mono.empty();
			return principal
				.then(Mono.fromCompletionStage(() -> this.engine.decideMethodAsync(method, targetClass,
						deferred.getArguments(), request)))
				.flatMapMany((outcome) -> proceed(deferred, adapter, outcome, request));
		});
		// singleOrEmpty, not next: the result must complete, not be cancelled, for its outcome to be settled
		return adapter.fromPublisher(adapter.isMultiValue() ? limited : limited.singleOrEmpty());
	}

	private Publisher<Object> proceed(MethodInvocation invocation, ReactiveAdapter adapter, RateLimitOutcome outcome,
			@Nullable RateLimitRequest request) {
		if (request instanceof RateLimitExchange exchange && !outcome.headers().isEmpty()) {
			exchange.setResponseHeaders(outcome.headers());
		}
		ErrorResponseException rejection = outcome.rejection();
		if (rejection != null) {
			return Flux.error(rejection);
		}
		Object result;
		try {
			result = invocation.proceed();
		}
		catch (Throwable ex) {
			settle(outcome, request, invocation.getMethod(), ex);
			return Flux.error(ex);
		}
		if (result == null) {
			settle(outcome, request, invocation.getMethod(), null);
			return Flux.empty();
		}
		return Flux.from(adapter.toPublisher(result))
			.doOnError((ex) -> settle(outcome, request, invocation.getMethod(), ex))
			.doOnComplete(() -> settle(outcome, request, invocation.getMethod(), null));
	}

	/**
	 * Policies that count by outcome: settled by the web filter from the status the client gets, or here from what
	 * the method did when it was called outside of a request.
	 */
	private void settle(RateLimitOutcome outcome, @Nullable RateLimitRequest request, Method method,
			@Nullable Throwable failure) {
		this.engine.settle(outcome, request, method, null, failure);
	}

	/**
	 * Fail for a {@code @RateLimited} method of the class that returns no reactive type: on WebFlux its limits could
	 * be decided only by blocking the event loop, and without the request (no thread holds it), so every client's
	 * address-keyed limit would be one. Called for each rate limited bean's class as it is created.
	 * @param targetClass the class
	 * @throws InvalidRateLimitPolicyException naming the method and what to return instead
	 */
	public static void checkReturnTypes(Class<?> targetClass) {
		Class<?> userClass = ClassUtils.getUserClass(targetClass);
		ReactiveAdapterRegistry adapters = ReactiveAdapterRegistry.getSharedInstance();
		for (Method method : ReflectionUtils.getUniqueDeclaredMethods(userClass)) {
			if (method.getDeclaringClass() == Object.class || method.isBridge() || method.isSynthetic()) {
				continue;
			}
			List<RateLimited> annotations = RateLimitedMethods.annotationsOf(method, userClass);
			if (!annotations.isEmpty() && adapters.getAdapter(method.getReturnType()) == null) {
				String name = annotations.get(0).name().isBlank() ? userClass.getSimpleName() + "." + method.getName()
						: annotations.get(0).name().trim();
				throw new InvalidRateLimitPolicyException(name, notReactive(userClass, method));
			}
		}
	}

	private static String notReactive(Class<?> userClass, Method method) {
		return "@RateLimited on " + userClass.getSimpleName() + "#" + method.getName() + " returns "
				+ method.getReturnType().getSimpleName() + ": on WebFlux a rate limited method returns a reactive type "
				+ "(Mono, Flux), so that its limits are decided for its request when the result is subscribed to, "
				+ "without blocking; return Mono<" + method.getReturnType().getSimpleName() + "> instead";
	}

}
