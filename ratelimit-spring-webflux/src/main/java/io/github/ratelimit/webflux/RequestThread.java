package io.github.ratelimit.webflux;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;
import reactor.core.scheduler.Schedulers;

import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.util.ClassUtils;
import org.springframework.web.server.ServerWebExchange;

/**
 * Where a reactive request continues once its decision is known. A decision made at once (in memory, from the deny
 * cache, answered by a lease) on the request's own event loop continues there, with no hop. A decision the store answers later
 * completes on a thread that is not the request's: Lettuce's I/O thread, the AWS SDK's, or the JVM's one
 * {@code CompletableFuture} timer after a timeout. Continuing there would run the handler, the routing and the
 * response's serialization on that thread, delaying every other answer it carries: under a burst, decisions then miss
 * the store's timeout and fall to the failure mode. So the request returns to the event loop of its own connection
 * (Reactor Netty), or, on another server, to Reactor's parallel scheduler, whose threads are as many as the cores
 * and, like an event loop, must not block.
 */
final class RequestThread {

	private static final boolean REACTOR_NETTY = ClassUtils.isPresent("reactor.netty.Connection",
			RequestThread.class.getClassLoader());

	private static final Loop PARALLEL = new Loop((task) -> Schedulers.parallel().schedule(task), () -> true);

	private RequestThread() {
	}

	/**
	 * Return the decision as a {@code Mono} that signals on the exchange's own thread.
	 * @param exchange the exchange whose connection's event loop to return to, or {@code null} if unknown
	 * @param decision starts the decision when subscribed to
	 * @param <T> the decision's type
	 * @return the decision, signalled on the request's thread
	 */
	static <T> Mono<T> resume(@Nullable ServerWebExchange exchange, Supplier<? extends CompletionStage<T>> decision) {
		return Mono.defer(() -> {
			CompletableFuture<T> future = decision.get().toCompletableFuture();
			Loop loop = loopOf(exchange);
			// Decided at once on the request's own thread: no hop. The decision may have started elsewhere, though (a
			// principal or a key resolver answered on a store client's thread), and then it goes back all the same.
			if (future.isDone() && loop.isCurrent()) {
				return Mono.fromFuture(future);
			}
			return Mono.<T>create((sink) -> future.whenComplete((value, failure) -> {
				try {
					loop.executor().execute(() -> signal(sink, value, failure));
				}
				catch (RejectedExecutionException ex) {
					// The event loop is shutting down with the server: answer where the decision completed.
					signal(sink, value, failure);
				}
			}));
		});
	}

	private static <T> void signal(MonoSink<T> sink, @Nullable T value, @Nullable Throwable failure) {
		if (failure != null) {
			sink.error((failure instanceof CompletionException && failure.getCause() != null) ? failure.getCause()
					: failure);
		}
		else if (value != null) {
			sink.success(value);
		}
		else {
			sink.success();
		}
	}

	private static Loop loopOf(@Nullable ServerWebExchange exchange) {
		if (exchange != null && REACTOR_NETTY) {
			try {
				Loop loop = ReactorNetty.loopOf(ServerHttpRequestDecorator.getNativeRequest(exchange.getRequest()));
				if (loop != null) {
					return loop;
				}
			}
			catch (IllegalArgumentException | IllegalStateException ex) {
				// A request of another kind (a mock's, as WebTestClient bound to an application sends, or a decorator
				// Spring cannot unwrap): no connection to return to.
			}
		}
		return PARALLEL;
	}

	/**
	 * Where a request goes on: its executor, and whether the current thread is it. On another server than Reactor
	 * Netty the request's thread is not known: a decision made at once continues where it was made.
	 */
	private record Loop(Executor executor, BooleanSupplier isCurrentThread) {

		boolean isCurrent() {
			return this.isCurrentThread.getAsBoolean();
		}

	}

	/** Apart, so that Reactor Netty's and Netty's types are loaded only where they are present. */
	private static final class ReactorNetty {

		static @Nullable Loop loopOf(Object nativeRequest) {
			if (nativeRequest instanceof reactor.netty.Connection connection) {
				io.netty.channel.EventLoop eventLoop = connection.channel().eventLoop();
				return new Loop(eventLoop, eventLoop::inEventLoop);
			}
			return null;
		}

	}

}
