package io.github.ratelimit.aop;

import java.util.ArrayList;
import java.util.List;

import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;

/**
 * What the layers of one request hold for policies that count by outcome, settled once, from the status the client
 * gets: after the whole filter chain, so after error handling ({@code @ExceptionHandler}, advice,
 * {@code ResponseStatusException}, {@code sendError}) and Spring Security's entry points, and for an asynchronous
 * request once it completes.
 */
final class Settlements {

	/** Set by the filter for the requests it settles: the layers after it leave their holds to it. */
	private static final String SETTLED_BY_FILTER = Settlements.class.getName() + ".settledByFilter";

	private static final String ATTRIBUTE = Settlements.class.getName();

	private final List<PolicyEnforcer.Held> holds = new ArrayList<>(2);

	private Settlements() {
	}

	/** Mark a request whose holds the filter settles at its end. */
	static void settledByFilter(HttpServletRequest request) {
		request.setAttribute(SETTLED_BY_FILTER, Boolean.TRUE);
	}

	/**
	 * Leave a layer's hold to the filter, if it settles this request.
	 * @return whether it will: else the caller settles the hold itself
	 */
	static boolean defer(@Nullable HttpServletRequest request, PolicyEnforcer.Held held) {
		if (request == null || request.getAttribute(SETTLED_BY_FILTER) == null) {
			return false;
		}
		if (!held.countsByOutcome()) {
			return true;
		}
		Settlements settlements = (Settlements) request.getAttribute(ATTRIBUTE);
		if (settlements == null) {
			settlements = new Settlements();
			request.setAttribute(ATTRIBUTE, settlements);
		}
		settlements.holds.add(held);
		return true;
	}

	/**
	 * Settle what the request's layers hold: at once if the request is over, else when its asynchronous processing
	 * completes.
	 * @param failed whether the chain threw (the client gets a 500)
	 */
	static void settle(HttpServletRequest request, HttpServletResponse response, boolean failed) {
		Settlements settlements = (Settlements) request.getAttribute(ATTRIBUTE);
		if (settlements == null) {
			return;
		}
		if (!failed && request.isAsyncStarted()) {
			request.getAsyncContext().addListener(new AsyncListener() {

				@Override
				public void onComplete(AsyncEvent event) {
					settlements.settle(response.getStatus());
				}

				@Override
				public void onTimeout(AsyncEvent event) {
				}

				@Override
				public void onError(AsyncEvent event) {
				}

				@Override
				public void onStartAsync(AsyncEvent event) {
				}

			});
			return;
		}
		settlements.settle(failed ? 500 : response.getStatus());
	}

	private void settle(int status) {
		for (PolicyEnforcer.Held held : this.holds) {
			held.settle(() -> status);
		}
	}

}
