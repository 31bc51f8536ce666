package io.github.ratelimit.engine;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import io.github.ratelimit.web.RateLimitRequest;
import org.jspecify.annotations.Nullable;

/**
 * What the layers of one request hold for policies that count by outcome, settled once from the status the client
 * gets: a web stack that knows it (after error handling and security's entry points, for an asynchronous request
 * once it completes) says so when the request starts, and settles when it ends. Without one, a layer settles from
 * what the method returned or threw.
 */
final class Settlements {

	/** Set for the requests the web stack settles: the layers leave their holds to it. */
	private static final String SETTLED_BY_STACK = Settlements.class.getName() + ".settledByStack";

	private static final String ATTRIBUTE = Settlements.class.getName();

	private final List<LayerHold> holds = new ArrayList<>(2);

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
		if (!held.countsByOutcome()) {
			return true;
		}
		// Layers of one request may finish on different threads (two calls of a reactive request, zipped).
		synchronized (request) {
			Settlements settlements = (Settlements) request.getAttribute(ATTRIBUTE);
			if (settlements == null) {
				settlements = new Settlements();
				request.setAttribute(ATTRIBUTE, settlements);
			}
			settlements.holds.add(held);
		}
		return true;
	}

	/** Whether the request's layers hold anything to settle. */
	static boolean pending(RateLimitRequest request) {
		return request.getAttribute(ATTRIBUTE) != null;
	}

	/**
	 * Settle what the request's layers hold, from the status the client gets, without waiting for the store.
	 * @return a stage that completes once every layer is settled
	 */
	static CompletionStage<Void> settle(RateLimitRequest request, int status) {
		Settlements settlements = (Settlements) request.getAttribute(ATTRIBUTE);
		if (settlements == null) {
			return CompletableFuture.completedFuture(null);
		}
		List<LayerHold> holds;
		synchronized (request) {
			holds = List.copyOf(settlements.holds);
		}
		CompletableFuture<?>[] settled = new CompletableFuture<?>[holds.size()];
		for (int i = 0; i < settled.length; i++) {
			settled[i] = holds.get(i).settle(() -> status).toCompletableFuture();
		}
		return CompletableFuture.allOf(settled);
	}

}
