package io.github.ratelimit.webflux;

import java.lang.reflect.Method;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicReference;

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
import reactor.core.scheduler.Schedulers;

import org.springframework.aop.ProxyMethodInvocation;
import org.springframework.aop.support.AopUtils;
import org.springframework.core.KotlinDetector;
import org.springframework.core.ReactiveAdapter;
import org.springframework.core.ReactiveAdapterRegistry;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;
import org.springframework.web.ErrorResponseException;

/**
 * Rate limits an invocation of a {@code @RateLimited} method that returns a {@code Mono} or a {@code Flux} (a
 * Reactive Streams {@code Publisher}), a Kotlin {@code Flow}, or that is a Kotlin {@code suspend} function: decided
 * when the result is subscribed to (collected, awaited), as Spring's {@code @Retryable} does for reactive types, by
 * the engine's non-blocking decision, for the request the {@link RateLimitWebFilter} handed down (a coroutine of a
 * WebFlux request carries its Reactor context). An admitted invocation proceeds with the outcome's headers on the
 * response; a rejected one never proceeds, and its result fails with the rejection, which the web stack's error
 * handling renders as a {@code 429} problem.
 * <p>
 * A rate limited method that returns a plain value, or another asynchronous type ({@code CompletableFuture}, RxJava's),
 * fails the application's start-up ({@link #checkReturnTypes}): its limits could be decided only by blocking the
 * event loop, or without its request (those types do not carry the Reactor context the request travels in). Spring
 * Security's reactive method security draws the same line.
 *
 * @since 0.2.0
 */
public final class ReactiveRateLimitInterceptor implements MethodInterceptor {

	/** Kotlin's cold asynchronous stream, adapted by Spring when kotlinx-coroutines-reactor is present. */
	private static final String FLOW = "kotlinx.coroutines.flow.Flow";

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
		// A suspend function's invocation proceeds to a Mono, which Spring's proxy awaits in the caller's coroutine.
		boolean suspending = KotlinDetector.isSuspendingFunction(method);
		ReactiveAdapter adapter = suspending ? null : this.adapters.getAdapter(method.getReturnType());
		if (!suspending && (adapter == null || !isDecidable(method.getReturnType()))) {
			// checkReturnTypes refused such a method at start-up; a bean it could not see fails here
			throw new IllegalStateException(notReactive(ClassUtils.getUserClass(method.getDeclaringClass()), method));
		}
		Object target = invocation.getThis();
		Class<?> targetClass = (target != null) ? AopUtils.getTargetClass(target) : method.getDeclaringClass();
		Flux<Object> limited = Flux.deferContextual((context) -> {
			// A clone per subscription: each proceeds through the rest of the advice chain once (a retry too).
			MethodInvocation deferred = (invocation instanceof ProxyMethodInvocation proxied)
					? proxied.invocableClone() : invocation;
			RateLimitRequest request = RateLimitWebFilter.request(context);
			Mono<?> principal = (request instanceof ExchangeRateLimitRequest exchange)
					? SecurityPrincipal.current().doOnNext(exchange::setPrincipal) : Mono.empty();
			return principal
				.then(Mono.fromCompletionStage(() -> this.engine.decideMethodAsync(method, targetClass,
						deferred.getArguments(), request)))
				.flatMapMany((outcome) -> proceed(deferred, adapter, outcome, request));
		});
		if (adapter == null) {
			return limited.singleOrEmpty();
		}
		// singleOrEmpty, not next: the result must complete, not be cancelled, for its outcome to be settled
		return adapter.fromPublisher(adapter.isMultiValue() ? limited : limited.singleOrEmpty());
	}

	/**
	 * @param adapter the adapter of the method's return type, or {@code null} for a suspend function, whose
	 * invocation proceeds to a {@code Publisher}
	 */
	private Publisher<Object> proceed(MethodInvocation invocation, @Nullable ReactiveAdapter adapter,
			RateLimitOutcome outcome, @Nullable RateLimitRequest request) {
		if (request instanceof RateLimitExchange exchange && !outcome.headers().isEmpty()) {
			exchange.setResponseHeaders(outcome.headers());
		}
		ErrorResponseException rejection = outcome.rejection();
		if (rejection != null) {
			return Flux.error(rejection);
		}
		Method method = invocation.getMethod();
		if (request != null) {
			// Handed to the web filter before the method runs: a streamed Flux commits the response with its first
			// element, when the filter settles from the status.
			settle(outcome, request, method, null);
		}
		Object result;
		try {
			result = invocation.proceed();
		}
		catch (Throwable ex) {
			return Flux.<Object>error(ex).doOnError((failure) -> settleOutside(outcome, request, method, failure));
		}
		if (result == null) {
			settleOutside(outcome, request, method, null);
			return Flux.empty();
		}
		Publisher<?> publisher = (adapter != null) ? adapter.toPublisher(result) : (Publisher<?>) result;
		Flux<Object> produced = Flux.from(publisher);
		if (this.engine.settlesCosts(outcome)) {
			produced = settlingCosts(produced, outcome, request, adapter == null || !adapter.isMultiValue());
		}
		return produced
			.doOnError((ex) -> settleOutside(outcome, request, method, ex))
			.doOnComplete(() -> settleOutside(outcome, request, method, null));
	}

	/**
	 * Settle a cost known only once the result is complete ({@code #result}: a single-valued result's value, else
	 * {@code null}), on a thread that may wait for the store, never holding the response back.
	 */
	private Flux<Object> settlingCosts(Flux<Object> produced, RateLimitOutcome outcome,
			@Nullable RateLimitRequest request, boolean singleValued) {
		AtomicReference<@Nullable Object> value = new AtomicReference<>();
		return produced.doOnNext((element) -> {
			if (singleValued) {
				value.set(element);
			}
		}).doOnComplete(() -> {
			try {
				Schedulers.boundedElastic().schedule(() -> this.engine.settleCosts(outcome, request, value.get()));
			}
			catch (RejectedExecutionException ex) {
				// The workers are saturated: the reservation stands, and the response goes out as it is.
			}
		});
	}

	/** Outside of a request, what counts by outcome is settled from what the method did, once it is known. */
	private void settleOutside(RateLimitOutcome outcome, @Nullable RateLimitRequest request, Method method,
			@Nullable Throwable failure) {
		if (request == null) {
			settle(outcome, null, method, failure);
		}
	}

	/** Without waiting for the store: this may run on an event loop, or on the store client's I/O thread. */
	private void settle(RateLimitOutcome outcome, @Nullable RateLimitRequest request, Method method,
			@Nullable Throwable failure) {
		this.engine.settleAsync(outcome, request, method, null, failure);
	}

	/**
	 * Fail for a {@code @RateLimited} method of the class that returns no {@code Publisher} or Kotlin {@code Flow}
	 * and is no Kotlin {@code suspend} function: on WebFlux its limits could be decided only by blocking the event
	 * loop, or without the request (only a {@code Publisher} subscribed by WebFlux, or a coroutine it runs, carries
	 * the Reactor context the request travels in), so every client's address-keyed limit would be one. Called for
	 * each rate limited bean's class as it is created.
	 * @param targetClass the class
	 * @throws InvalidRateLimitPolicyException naming the method and what to return instead
	 */
	public static void checkReturnTypes(Class<?> targetClass) {
		Class<?> userClass = ClassUtils.getUserClass(targetClass);
		for (Method method : ReflectionUtils.getUniqueDeclaredMethods(userClass)) {
			if (method.getDeclaringClass() == Object.class || method.isBridge() || method.isSynthetic()) {
				continue;
			}
			List<RateLimited> annotations = RateLimitedMethods.annotationsOf(method, userClass);
			if (!annotations.isEmpty() && !KotlinDetector.isSuspendingFunction(method)
					&& !isDecidable(method.getReturnType())) {
				String name = annotations.get(0).name().isBlank() ? userClass.getSimpleName() + "." + method.getName()
						: annotations.get(0).name().trim();
				throw new InvalidRateLimitPolicyException(name, notReactive(userClass, method));
			}
		}
	}

	/** A type whose subscription (or collection) carries the request's Reactor context. */
	private static boolean isDecidable(Class<?> returnType) {
		return Publisher.class.isAssignableFrom(returnType) || returnType.getName().equals(FLOW);
	}

	private static String notReactive(Class<?> userClass, Method method) {
		return "@RateLimited on " + userClass.getSimpleName() + "#" + method.getName() + " returns "
				+ method.getReturnType().getSimpleName() + ": on WebFlux a rate limited method returns a Mono or a Flux "
				+ "(a Reactive Streams Publisher), a Kotlin Flow, or is a Kotlin suspend function, so that its limits "
				+ "are decided for its request when the result is subscribed to, without blocking; return Mono<"
				+ method.getReturnType().getSimpleName() + "> instead";
	}

}
