package io.github.ratelimit.engine;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import io.github.ratelimit.web.RateLimitRequest;
import io.github.ratelimit.web.RateLimitStatus;
import org.jspecify.annotations.Nullable;

import org.springframework.web.context.request.async.DeferredResult;

/**
 * What the layers of one request hold for policies that count by outcome, settled once from the status the client
 * gets: a web stack that knows it (after error handling and security's entry points, for an asynchronous request
 * once it completes) says so when the request starts, and settles when it ends. Without one, a layer settles from
 * what the method returned or threw.
 * <p>
 * A method whose result the stack serves after the method returns (Spring MVC's asynchronous results) also leaves
 * the costs known after the response to the end of the request, so that they are settled from what the handler
 * reported while the result was served, not before.
 */
final class Settlements {

	/** Set for the requests the web stack settles: the layers leave their holds to it. */
	private static final String SETTLED_BY_STACK = Settlements.class.getName() + ".settledByStack";

	private static final String ATTRIBUTE = Settlements.class.getName();

	private final List<LayerHold> holds = new ArrayList<>(2);

	/** Whether the request ended and its slots were given back: a layer decided later gives its own back at once. */
	private boolean released;

	/** Holds whose costs are settled at the end, each with what its method returned. */
	private final List<Served> served = new ArrayList<>(1);

	private Settlements() {
	}

	/** Mark a request whose holds the web stack settles at its end. */
	static void settledByStack(RateLimitRequest request) {
		request.setAttribute(SETTLED_BY_STACK, Boolean.TRUE);
	}

	/**
	 * Leave a layer's hold to the web stack, if it settles this request.
	 * @return whether it will: else the caller settles the hold itself
	 */
	static boolean defer(@Nullable RateLimitRequest request, LayerHold held) {
		if (request == null || request.getAttribute(SETTLED_BY_STACK) == null) {
			return false;
		}
		if (!held.countsByOutcome() && !held.releasesAtEnd()) {
			return true;
		}
		// Layers of one request may finish on different threads (two calls of a reactive request, zipped).
		synchronized (request) {
			Settlements settlements = of(request);
			if (!settlements.released) {
				settlements.holds.add(held);
				return true;
			}
		}
		held.release(); // decided after the request ended (a client that went away while the store answered)
		return true;
	}

	/**
	 * Leave a method layer's hold to the end of the request, if the web stack settles it: its costs known after the
	 * response as well as what counts by outcome, for a result served after the method returns.
	 * @param result what the method returned
	 * @return whether it will: else the caller settles the hold itself
	 */
	static boolean deferUntilComplete(@Nullable RateLimitRequest request, LayerHold held, @Nullable Object result) {
		if (request == null || request.getAttribute(SETTLED_BY_STACK) == null) {
			return false;
		}
		if (!held.settlesCosts() && !held.countsByOutcome() && !held.releasesAtEnd()) {
			return true;
		}
		synchronized (request) {
			Settlements settlements = of(request);
			if (held.settlesCosts()) {
				settlements.served.add(new Served(held, result));
			}
			if ((held.countsByOutcome() || held.releasesAtEnd()) && !settlements.released) {
				settlements.holds.add(held);
			}
			else if (settlements.released) {
				held.release();
			}
		}
		return true;
	}

	/** Called holding the request's lock. */
	private static Settlements of(RateLimitRequest request) {
		Settlements settlements = (Settlements) request.getAttribute(ATTRIBUTE);
		if (settlements == null) {
			settlements = new Settlements();
			request.setAttribute(ATTRIBUTE, settlements);
		}
		return settlements;
	}

	/** By policy name, the costs the handler reported so far ({@link RateLimitStatus#settle}). */
	@SuppressWarnings("unchecked")
	static Map<String, Long> reported(@Nullable RateLimitRequest request) {
		Object costs = (request != null) ? request.getAttribute(RateLimitStatus.COSTS_ATTRIBUTE) : null;
		return (costs instanceof Map<?, ?> map) ? (Map<String, Long>) map : Map.of();
	}

	/** Whether the request's layers hold anything to settle. */
	static boolean pending(RateLimitRequest request) {
		return request.getAttribute(ATTRIBUTE) != null;
	}

	/**
	 * Settle what the request's layers hold, from the status the client gets, without waiting for the store, except
	 * for the costs left by {@link #deferUntilComplete}: only a blocking stack leaves them, and they are settled first,
	 * so that what counts by outcome gives back what the request cost.
	 * @return a stage that completes once every layer is settled
	 */
	static CompletionStage<Void> settle(RateLimitRequest request, int status) {
		Settlements settlements = (Settlements) request.getAttribute(ATTRIBUTE);
		if (settlements == null) {
			return CompletableFuture.completedFuture(null);
		}
		List<LayerHold> holds;
		List<Served> served;
		synchronized (request) {
			holds = List.copyOf(settlements.holds);
			served = List.copyOf(settlements.served);
		}
		if (!served.isEmpty()) {
			Map<String, Long> reported = reported(request);
			for (Served one : served) {
				one.settleCosts(reported);
			}
		}
		CompletableFuture<?>[] settled = new CompletableFuture<?>[holds.size()];
		for (int i = 0; i < settled.length; i++) {
			settled[i] = holds.get(i).settle(() -> status).toCompletableFuture();
		}
		return CompletableFuture.allOf(settled);
	}

	/**
	 * Give back the slots of the concurrency limits the request's layers hold, once the request ended however it
	 * ended (response, error, cancel, timeout), without waiting for the store. Given back once: later calls do
	 * nothing.
	 * @return a stage that completes once given back; never exceptionally
	 */
	static CompletionStage<Void> release(RateLimitRequest request) {
		List<LayerHold> holds;
		synchronized (request) {
			Settlements settlements = of(request);
			settlements.released = true;
			holds = List.copyOf(settlements.holds);
		}
		List<CompletableFuture<Void>> released = new ArrayList<>(1);
		for (LayerHold held : holds) {
			if (held.releasesAtEnd()) {
				released.add(held.release().toCompletableFuture());
			}
		}
		return CompletableFuture.allOf(released.toArray(new CompletableFuture<?>[0]));
	}

	/** A method layer's hold whose costs are settled at the end of the request, with what the method returned. */
	private record Served(LayerHold held, @Nullable Object result) {

		/**
		 * Settle from what the handler reported and the value the result completed with: a {@code CompletionStage}'s
		 * or a {@code DeferredResult}'s; a stream's elements ({@code SseEmitter}, {@code StreamingResponseBody}, a
		 * {@code Flux}) are no value, and are reported.
		 */
		void settleCosts(Map<String, Long> reported) {
			Object result = this.result;
			if (result instanceof CompletionStage<?> stage) {
				CompletableFuture<?> future;
				try {
					future = stage.toCompletableFuture();
				}
				catch (UnsupportedOperationException ex) {
					this.held.settleCosts(null, reported, false); // a stage that cannot be read is no value
					return;
				}
				boolean completed = future.isDone() && !future.isCompletedExceptionally();
				this.held.settleCosts(completed ? future.getNow(null) : null, reported, completed);
			}
			else if (result instanceof DeferredResult<?> deferred) {
				Object value = deferred.getResult();
				boolean completed = deferred.hasResult() && !(value instanceof Throwable);
				this.held.settleCosts(completed ? value : null, reported, completed);
			}
			else {
				this.held.settleCosts(null, reported, true);
			}
		}

	}

}
