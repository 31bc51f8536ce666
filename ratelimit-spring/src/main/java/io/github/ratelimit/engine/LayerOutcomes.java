package io.github.ratelimit.engine;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.limiter.Admission;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.web.AppliedRateLimit;
import io.github.ratelimit.web.RateLimitExceededException;
import io.github.ratelimit.web.RateLimitException;
import io.github.ratelimit.web.RateLimitHeadersWriter;
import io.github.ratelimit.web.RateLimitLockedOutException;
import io.github.ratelimit.web.RateLimitRequest;
import io.github.ratelimit.web.RateLimitStatus;
import io.github.ratelimit.web.RateLimitUnavailableException;
import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpHeaders;
import org.springframework.web.ErrorResponseException;

/**
 * Turns what the limiter decided for a layer into the {@link RateLimitOutcome} the web stack writes back: the limits
 * applied, the rejecting or else the most restrictive first, with those of earlier layers; the headers; the rejection;
 * what the layer holds for its settlement. Records who is limited (heavy hitters) and what shadow policies would have
 * rejected on the way.
 */
final class LayerOutcomes {

	private static final Comparator<AppliedRateLimit> MOST_RESTRICTIVE_FIRST = LayerOutcomes::compareRestrictiveness;

	private final RateLimitHeadersWriter headersWriter;

	private final ShadowReporter shadowReporter;

	private final @Nullable HeavyHitters heavyHitters;

	private final @Nullable RateLimitLockouts lockouts;

	LayerOutcomes(RateLimitHeadersWriter headersWriter, ShadowReporter shadowReporter,
			@Nullable HeavyHitters heavyHitters, @Nullable RateLimitLockouts lockouts) {
		this.headersWriter = headersWriter;
		this.shadowReporter = shadowReporter;
		this.heavyHitters = heavyHitters;
		this.lockouts = lockouts;
	}

	/** The outcome of one policy's decision, for the engine's path of a single policy. */
	RateLimitOutcome single(@Nullable RateLimitRequest request, PolicySpec spec, RateLimitPolicy policy, String key,
			Decision decision) {
		if (this.heavyHitters != null) {
			this.heavyHitters.record(policy.name(), key, decision.allowed());
		}
		List<AppliedRateLimit> applied = List.of(new AppliedRateLimit(policy, decision, spec.isSharedByEveryClient()));
		RateLimitException rejection = decision.allowed() ? null : rejection(policy, decision, List.of(policy.name()));
		return outcome(request, applied, rejection, LayerHold.NONE);
	}

	/**
	 * A request refused before any policy counted it: a cost that is not a whole number (400), or a cost expression
	 * that failed under a policy that fails closed (503).
	 */
	static RateLimitOutcome refused(ErrorResponseException ex) {
		HttpHeaders headers = new HttpHeaders();
		if (ex instanceof RateLimitException rejection) {
			rejection.applyRetryAfter(headers);
		}
		return new RateLimitOutcome(List.of(), headers, ex, LayerHold.NONE);
	}

	/**
	 * The limits the enforced policies' admission applied, in the order asked; not the checks of their penalty groups
	 * ({@link RateLimitLockouts} reads them).
	 */
	List<AppliedRateLimit> applied(LayerPlan plan, @Nullable Admission admission) {
		List<AppliedRateLimit> applied = new ArrayList<>(plan.checksFrom());
		if (admission != null) {
			for (int i = 0; i < plan.checksFrom(); i++) {
				Decision decision = admission.decision(i);
				if (decision != null) {
					if (this.heavyHitters != null) {
						Acquisition acquisition = plan.acquisitions().get(i);
						this.heavyHitters.record(acquisition.policy().name(), acquisition.key(), decision.allowed());
					}
					Waiting waiting = plan.enforced().get(i).waiting();
					RateLimitPolicy policy = plan.real(i);
					Decision real = (waiting != null)
							? Waiting.real(policy, plan.acquisitions().get(i).policy(), decision) : decision;
					applied.add(new AppliedRateLimit(policy, real,
							plan.enforced().get(i).isSharedByEveryClient()));
				}
			}
		}
		return applied;
	}

	/** The outcome of a layer some limit rejected, or {@code null} if none did. */
	@Nullable RateLimitOutcome rejected(@Nullable RateLimitRequest request, List<AppliedRateLimit> applied) {
		List<AppliedRateLimit> rejected = new ArrayList<>(1);
		for (AppliedRateLimit limit : applied) {
			if (!limit.decision().allowed()) {
				rejected.add(limit);
			}
		}
		if (rejected.isEmpty()) {
			return null;
		}
		// The rejection that lasts longest leads: retrying sooner would only be rejected again. What earlier layers
		// took stays taken: each counts every request that reaches it.
		rejected.sort(Comparator.comparingLong(AppliedRateLimit::retryAfterSeconds).reversed());
		List<AppliedRateLimit> all = new ArrayList<>(applied);
		all.removeAll(rejected);
		all.sort(MOST_RESTRICTIVE_FIRST);
		all.addAll(0, rejected);
		AppliedRateLimit first = rejected.get(0);
		return outcome(request, all, rejection(first.policy(), first.decision(),
				rejected.stream().map((limit) -> limit.policy().name()).toList()), LayerHold.NONE);
	}

	/**
	 * The rejection of a request whose bucket reserved its turn, when it may not wait for it (its key's queue is
	 * full, or its cost above the real burst): what the layer took is given back.
	 */
	RateLimitOutcome refused(@Nullable RateLimitRequest request, LayerPlan plan, @Nullable Admission admission,
			Waits.Wait wait, List<AppliedRateLimit> applied) {
		if (admission != null) {
			int[] taken = new int[plan.acquisitions().size()];
			Arrays.setAll(taken, (i) -> i);
			admission.refundAsync(taken); // not awaited: on a non-blocking stack this runs where nothing may wait
		}
		RateLimitOutcome rejected = rejected(request, Waits.rejections(plan, wait, applied));
		return (rejected != null) ? rejected : RateLimitOutcome.NONE;
	}

	/** The outcome of an admitted layer, once its shadow policies are decided too. */
	RateLimitOutcome admitted(@Nullable RateLimitRequest request, LayerPlan plan,
			@Nullable Admission admission, List<AppliedRateLimit> applied, List<Admission> shadowAdmissions) {
		for (int i = 0; i < shadowAdmissions.size(); i++) {
			Decision decision = shadowAdmissions.get(i).decision(0);
			if (decision != null && !decision.allowed()) {
				this.shadowReporter.rejected(plan.shadowAcquisitions().get(i).policy(), decision);
			}
		}
		List<AppliedRateLimit> sorted = new ArrayList<>(applied);
		sorted.sort(MOST_RESTRICTIVE_FIRST);
		boolean checked = plan.checksFrom() < plan.acquisitions().size();
		return outcome(request, sorted, null, new LayerHold(plan.scope(), plan.ownEnforced(), admission,
				plan.shadows(), shadowAdmissions, checked ? this.lockouts : null, plan.acquisitions(),
				(request != null) ? request.applicationCodeExecutor() : null));
	}

	/**
	 * The outcome of a layer, with the limits of earlier layers (the filter's): as the request attribute that
	 * {@link RateLimitStatus} reads and as headers, the rejecting or else the most restrictive of every layer first.
	 */
	RateLimitOutcome outcome(@Nullable RateLimitRequest request, List<AppliedRateLimit> applied,
			@Nullable RateLimitException rejection, LayerHold held) {
		if (applied.isEmpty() && rejection == null) {
			// Nothing to show (every policy skipped, exempt or in shadow mode), but what was decided is held.
			return (held == LayerHold.NONE) ? RateLimitOutcome.NONE
					: new RateLimitOutcome(List.of(), HttpHeaders.EMPTY, null, held);
		}
		List<AppliedRateLimit> all = applied;
		if (request != null) {
			// Layers of one request may finish on different threads (two calls of a reactive request, zipped).
			synchronized (request) {
				if (request.getAttribute(RateLimitStatus.ATTRIBUTE) instanceof List<?> list && !list.isEmpty()) {
					all = new ArrayList<>(applied);
					for (Object limit : list) {
						if (limit instanceof AppliedRateLimit appliedLimit) {
							all.add(appliedLimit);
						}
					}
					all.sort((rejection != null)
							? Comparator.comparing((AppliedRateLimit limit) -> limit.decision().allowed())
							: MOST_RESTRICTIVE_FIRST);
				}
				all = List.copyOf(all);
				request.setAttribute(RateLimitStatus.ATTRIBUTE, all);
			}
		}
		HttpHeaders headers = new HttpHeaders();
		if (!all.isEmpty()) {
			this.headersWriter.writeHeaders(headers, all);
		}
		if (rejection != null) {
			rejection.applyRetryAfter(headers);
		}
		return new RateLimitOutcome(List.copyOf(all), headers, rejection, held);
	}

	static RateLimitException rejection(RateLimitPolicy policy, Decision decision, List<String> violated) {
		if (decision.origin() == Decision.Origin.FAIL_CLOSED) {
			return new RateLimitUnavailableException(policy, decision);
		}
		if (decision.origin() == Decision.Origin.PENALTY) {
			return new RateLimitLockedOutException(policy, decision, violated);
		}
		return new RateLimitExceededException(policy, decision, violated);
	}

	/** Known decisions first, then fewer remaining units, then a later reset. */
	private static int compareRestrictiveness(AppliedRateLimit first, AppliedRateLimit second) {
		Decision a = first.decision();
		Decision b = second.decision();
		if (a.isKnown() != b.isKnown()) {
			return a.isKnown() ? -1 : 1;
		}
		int byRemaining = Long.compare(a.remaining(), b.remaining());
		return (byRemaining != 0) ? byRemaining : Long.compare(b.resetAfterMillis(), a.resetAfterMillis());
	}

}
