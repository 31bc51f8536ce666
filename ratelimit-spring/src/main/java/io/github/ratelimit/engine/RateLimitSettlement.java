package io.github.ratelimit.engine;

import java.lang.reflect.Method;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import io.github.ratelimit.web.RateLimitRequest;
import org.jspecify.annotations.Nullable;

/**
 * Settles what the layers of an admitted request took once its outcome is known: the costs known after the response
 * (a {@code settle} expression over what the method returned and what the handler reported), and what policies that
 * count by outcome took, from the status the client gets. Each web stack calls it where its request ends; what a
 * layer took is held on the request ({@link RateLimitOutcome#held()}) until then.
 *
 * @since 0.3.0
 * @see RateLimitEngine#settlement()
 */
public final class RateLimitSettlement {

	static final RateLimitSettlement INSTANCE = new RateLimitSettlement();

	private RateLimitSettlement() {
	}

	/**
	 * Settle what an admitted method's policies took, once it returned or threw: the costs known after the response,
	 * from what it returned ({@code #result}, {@code null} if it threw) and what the handler reported
	 * ({@code #reported}); what policies that count by outcome took, left to the web stack when it settles the
	 * request from the status the client gets ({@link #settledByStack}), else at once from what the method returned
	 * or threw (a returned {@code ResponseEntity}'s status, a thrown exception's, the method's
	 * {@code @ResponseStatus}, or 200).
	 * @param outcome the method layer's outcome
	 * @param request the current request, or {@code null}
	 * @param method the method
	 * @param result what it returned, or {@code null}
	 * @param failure what it threw, or {@code null}
	 */
	public void settle(RateLimitOutcome outcome, @Nullable RateLimitRequest request, Method method,
			@Nullable Object result, @Nullable Throwable failure) {
		LayerHold held = outcome.held();
		if (held == LayerHold.NONE) {
			return;
		}
		// A method that threw still cost what it reported before: it may have done the work it reports.
		held.settleCosts((failure == null) ? result : null, Settlements.reported(request), failure == null);
		if (!Settlements.defer(request, held)) {
			held.settle(() -> CountOn.statusOf(method, result, failure)).toCompletableFuture().join();
		}
		held.release(); // the method is done: a concurrency limit's slot is free for the next call
	}

	/**
	 * Return whether an outcome holds slots of concurrency limits, which {@link #release} gives back: what a stack
	 * asks before it arranges to call it when the method's result ends.
	 * @param outcome the method layer's outcome
	 * @return whether {@link #release} has anything to do
	 * @since 0.5.0
	 */
	public boolean holdsSlots(RateLimitOutcome outcome) {
		return outcome.held().releasesAtEnd();
	}

	/**
	 * Give back the slots of the concurrency limits an admitted method holds, once its result ended however it ended
	 * (completed, failed, cancelled), without waiting for the store. Given back once: later calls, and the web
	 * stack's at the end of the request, do nothing.
	 * @param outcome the method layer's outcome
	 * @return a stage that completes once given back; never exceptionally
	 * @since 0.5.0
	 */
	public CompletionStage<Void> release(RateLimitOutcome outcome) {
		return outcome.held().release();
	}

	/**
	 * Settle what an admitted method's policies took once the request completes, for a result the web stack serves
	 * after the method returns (Spring MVC's asynchronous results: an {@code SseEmitter}, a
	 * {@code StreamingResponseBody}, a {@code DeferredResult}, a {@code CompletableFuture}, a {@code Callable}): the
	 * costs known after the response from what the handler reported by then ({@code #reported}) and the value the
	 * result completed with ({@code #result}: a {@code CompletionStage}'s or a {@code DeferredResult}'s, else
	 * {@code null}), then what counts by outcome from the status the client got. Left to the web stack's settlement
	 * of the request ({@link #settledByStack}, {@link #settleRequest}); without it, settled at once as
	 * {@link #settle} does.
	 * @param outcome the method layer's outcome
	 * @param request the current request, or {@code null}
	 * @param method the method
	 * @param result what it returned
	 * @since 0.3.0
	 */
	public void settleWhenRequestCompletes(RateLimitOutcome outcome, @Nullable RateLimitRequest request, Method method,
			@Nullable Object result) {
		if (!Settlements.deferUntilComplete(request, outcome.held(), result)) {
			settle(outcome, request, method, result, null);
		}
	}

	/**
	 * Settle what an admitted method's policies that count by outcome took, as {@link #settle} does, without waiting
	 * for the store.
	 * @param outcome the method layer's outcome
	 * @param request the current request, or {@code null}
	 * @param method the method
	 * @param result what it returned, or {@code null}
	 * @param failure what it threw, or {@code null}
	 * @return a stage that completes once settled, or at once when the web stack settles the request; never
	 * exceptionally
	 */
	public CompletionStage<Void> settleAsync(RateLimitOutcome outcome, @Nullable RateLimitRequest request, Method method,
			@Nullable Object result, @Nullable Throwable failure) {
		LayerHold held = outcome.held();
		if (held == LayerHold.NONE || Settlements.defer(request, held)) {
			return CompletableFuture.completedFuture(null);
		}
		return held.settle(() -> CountOn.statusOf(method, result, failure)).thenCompose((settled) -> held.release());
	}

	/**
	 * Return whether an outcome holds a reservation that a cost known after the response settles (a policy with a
	 * {@code settle} expression): what a non-blocking stack asks before it arranges to call {@link #settleCosts} off
	 * its event loop.
	 * @param outcome the method layer's outcome
	 * @return whether {@link #settleCosts} has anything to do
	 */
	public boolean settlesCosts(RateLimitOutcome outcome) {
		return outcome.held().settlesCosts();
	}

	/**
	 * Settle the reservations of the policies whose cost is known once the result ended, as {@link #settle} does;
	 * a call to the store, to be made where the thread may wait. A result that failed or was cancelled is settled from
	 * what the handler reported until then ({@code #reported}), with {@code #result} {@code null}.
	 * @param outcome the method layer's outcome
	 * @param request the current request, or {@code null}
	 * @param result what the method produced: its value, or a single-valued stream's element; {@code null} for none
	 * @param completed whether the result completed, rather than failed or was cancelled
	 */
	public void settleCosts(RateLimitOutcome outcome, @Nullable RateLimitRequest request, @Nullable Object result,
			boolean completed) {
		outcome.held().settleCosts(result, Settlements.reported(request), completed);
	}

	/**
	 * Say that the web stack settles this request's policies that count by outcome, from the status the client gets,
	 * by calling {@link #settleRequest} once the response is complete.
	 * @param request the request, as it starts
	 */
	public void settledByStack(RateLimitRequest request) {
		Settlements.settledByStack(request);
	}

	/**
	 * Return whether a request's layers hold units that its outcome settles.
	 * @param request the request
	 * @return whether {@link #settleRequest} has anything to do
	 */
	public boolean hasPendingSettlement(RateLimitRequest request) {
		return Settlements.pending(request);
	}

	/**
	 * Settle every layer's policies that count by outcome, from the status the client got, and give back the slots
	 * of its concurrency limits: the request is over.
	 * @param request the request
	 * @param status the response's status
	 */
	public void settleRequest(RateLimitRequest request, int status) {
		Settlements.settle(request, status).toCompletableFuture().join();
		Settlements.release(request);
	}

	/**
	 * Settle every layer's policies that count by outcome as {@link #settleRequest} does, without waiting for the
	 * store; not the slots of concurrency limits, given back by {@link #releaseRequestAsync} once the request ends.
	 * @param request the request
	 * @param status the response's status
	 * @return a stage that completes once settled; never exceptionally (a store that fails keeps the units)
	 */
	public CompletionStage<Void> settleRequestAsync(RateLimitRequest request, int status) {
		return Settlements.settle(request, status);
	}

	/**
	 * Give back the slots of the concurrency limits a request's layers hold, once it ended however it ended (its
	 * response written, an error, the client's cancel), without waiting for the store: what a non-blocking stack calls
	 * at the end, having settled what counts by outcome with {@link #settleRequestAsync} when the response was
	 * committed. {@link #settleRequest} does both. Given back once: later calls do nothing.
	 * @param request the request
	 * @return a stage that completes once given back; never exceptionally (a store that fails keeps the slots until
	 * their hold ends)
	 * @since 0.5.0
	 */
	public CompletionStage<Void> releaseRequestAsync(RateLimitRequest request) {
		return Settlements.release(request);
	}

}
