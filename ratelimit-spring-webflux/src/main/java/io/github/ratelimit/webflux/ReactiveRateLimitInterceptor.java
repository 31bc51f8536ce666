package io.github.ratelimit.webflux;

import java.lang.reflect.Method;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ForkJoinPool;
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
import reactor.core.publisher.SignalType;
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
 * A cost known after the response ({@code settle}) is settled once the result ends, however it ends: completed,
 * failed, timed out, or cancelled by a client that went away mid-stream. It is then settled from what the handler
 * reported until then ({@code RateLimitStatus.settle}), off the event loop, never holding the response back.
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
			AtomicReference<@Nullable CompletionStage<RateLimitOutcome>> deciding = new AtomicReference<>();
			return principal
				.then(RequestThread.resume((request instanceof ExchangeRateLimitRequest current) ? current.exchange()
						: null, () -> {
							CompletionStage<RateLimitOutcome> decision = this.engine.decideMethodAsync(method,
									targetClass, deferred.getArguments(), request);
							deciding.set(decision);
							return decision;
						}))
				// Cancelled while the store decided: a slot it takes is given back once it is known.
				.doOnCancel(() -> {
					CompletionStage<RateLimitOutcome> decision = deciding.get();
					if (decision != null) {
						decision.thenAccept(this.engine.settlement()::release);
					}
				})
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
			return settledWhenEnded(Flux.error(ex), outcome, request, method, false);
		}
		if (result == null) {
			return settledWhenEnded(Flux.empty(), outcome, request, method, false);
		}
		Publisher<?> publisher = (adapter != null) ? adapter.toPublisher(result) : (Publisher<?>) result;
		return settledWhenEnded(Flux.from(publisher), outcome, request, method,
				adapter == null || !adapter.isMultiValue());
	}

	/**
	 * Settle once the result ends, however it ends: it completes, fails (a timeout too), or is cancelled (the client
	 * went away, or the caller took what it needed). Once per subscription ({@code doFinally}), never holding the
	 * response back:
	 * <ul>
	 * <li>a cost known after the response, from what the handler reported until then ({@code #reported}) and what a
	 * single-valued result emitted ({@code #result}; {@code null} for a stream, or a result that emitted nothing), on
	 * a thread that may wait for the store;
	 * <li>outside of a request, what counts by outcome, from what the method did (the failure's status, else 200). A
	 * cancelled result has no outcome, so what those policies took stays taken: going away is no way out of the count.
	 * In a request, the web filter settles them from the status as the response commits (a response never committed
	 * keeps them likewise).
	 * </ul>
	 */
	private Flux<Object> settledWhenEnded(Flux<Object> produced, RateLimitOutcome outcome,
			@Nullable RateLimitRequest request, Method method, boolean singleValued) {
		boolean settlesCosts = this.engine.settlement().settlesCosts(outcome);
		boolean holdsSlots = this.engine.settlement().holdsSlots(outcome);
		if (!settlesCosts && !holdsSlots && request != null) {
			return produced;
		}
		Flux<Object> settled = produced;
		if (holdsSlots) {
			// The method's work is done however its result ended, a cancel included: its slots are free.
			settled = settled.doFinally((signal) -> this.engine.settlement().release(outcome));
		}
		if (request == null) {
			// Before the caller learns the outcome, so that what it does next finds the units given back.
			settled = settled.doOnError((ex) -> settle(outcome, null, method, ex))
				.doOnComplete(() -> settle(outcome, null, method, null));
		}
		if (settlesCosts) {
			AtomicReference<@Nullable Object> value = new AtomicReference<>();
			settled = (singleValued ? settled.doOnNext(value::set) : settled)
				.doFinally((signal) -> settleCosts(outcome, request, value.get(), signal == SignalType.ON_COMPLETE));
		}
		return settled;
	}

	/**
	 * On a thread that may wait for the store, so never on the event loop: Reactor's workers, or, when they are
	 * saturated, the common pool, whose queue takes any work, so that a busy moment loses no charge.
	 */
	private void settleCosts(RateLimitOutcome outcome, @Nullable RateLimitRequest request, @Nullable Object value,
			boolean completed) {
		Runnable settle = () -> this.engine.settlement().settleCosts(outcome, request, value, completed);
		try {
			Schedulers.boundedElastic().schedule(settle);
		}
		catch (RejectedExecutionException ex) {
			ForkJoinPool.commonPool().execute(settle);
		}
	}

	/** Without waiting for the store: this may run on an event loop, or on the store client's I/O thread. */
	private void settle(RateLimitOutcome outcome, @Nullable RateLimitRequest request, Method method,
			@Nullable Throwable failure) {
		this.engine.settlement().settleAsync(outcome, request, method, null, failure);
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
