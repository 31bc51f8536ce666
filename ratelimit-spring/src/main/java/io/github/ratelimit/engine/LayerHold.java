package io.github.ratelimit.engine;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.IntSupplier;

import io.github.ratelimit.Decision;
import io.github.ratelimit.limiter.Admission;
import io.github.ratelimit.store.Acquisition;
import org.jspecify.annotations.Nullable;

/**
 * What a layer's admitted request holds: settled once its outcome is known, giving back the units of policies that
 * do not count that outcome.
 */
final class LayerHold {

	static final LayerHold NONE = new LayerHold(null, List.of(), null, List.of(), List.of());

	/** The request as the layer's expressions saw it, for the settle expressions; {@code null} for none. */
	private final @Nullable RequestScope scope;

	private final List<PolicySpec> enforced;

	private final @Nullable Admission admission;

	private final List<PolicySpec> shadows;

	private final List<Admission> shadowAdmissions;

	/** Where the keys that break a policy with a penalty by a counted outcome are locked out, or {@code null}. */
	private final @Nullable RateLimitLockouts lockouts;

	/** The acquisitions of the enforced policies, for their keys. */
	private final List<Acquisition> acquisitions;

	/** Where a lock-out's store calls run, or {@code null} for the calling thread. */
	private final @Nullable Executor executor;

	/** When the request was admitted, for a slot held longer than its hold. */
	private final long admittedAt = System.nanoTime();

	/** Whether the slots of its concurrency limits were given back: once, by whoever is first. */
	private final AtomicBoolean released = new AtomicBoolean();

	LayerHold(@Nullable RequestScope scope, List<PolicySpec> enforced, @Nullable Admission admission,
			List<PolicySpec> shadows, List<Admission> shadowAdmissions) {
		this(scope, enforced, admission, shadows, shadowAdmissions, null, List.of(), null);
	}

	/**
	 * A hold that also locks out the key of a policy with a penalty whose counted outcome used its last unit: with
	 * count by outcome, the failure that reaches the limit breaks the policy.
	 */
	LayerHold(@Nullable RequestScope scope, List<PolicySpec> enforced, @Nullable Admission admission,
			List<PolicySpec> shadows, List<Admission> shadowAdmissions, @Nullable RateLimitLockouts lockouts,
			List<Acquisition> acquisitions, @Nullable Executor executor) {
		this.scope = scope;
		this.enforced = enforced;
		this.admission = admission;
		this.shadows = shadows;
		this.shadowAdmissions = shadowAdmissions;
		this.lockouts = lockouts;
		this.acquisitions = acquisitions;
		this.executor = executor;
	}

	/** Whether this layer decided the named policy (a shared one the method layer must not draw again). */
	boolean decided(String policy) {
		for (PolicySpec decided : this.enforced) {
			if (decided.policy().name().equals(policy)) {
				return true;
			}
		}
		for (PolicySpec decided : this.shadows) {
			if (decided.policy().name().equals(policy)) {
				return true;
			}
		}
		return false;
	}

	/** Whether a policy of this layer counts only some outcomes, so that the outcome must be known. */
	boolean countsByOutcome() {
		for (PolicySpec spec : this.enforced) {
			if (spec.countOn() != null) {
				return true;
			}
		}
		for (PolicySpec spec : this.shadows) {
			if (spec.countOn() != null) {
				return true;
			}
		}
		return false;
	}

	/** Whether a policy of this layer is a concurrency limit, whose slot is given back when the request ends. */
	boolean releasesAtEnd() {
		for (PolicySpec spec : this.enforced) {
			if (Concurrency.limits(spec)) {
				return true;
			}
		}
		for (PolicySpec spec : this.shadows) {
			if (Concurrency.limits(spec)) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Give back the slots of the concurrency limits this layer's request holds, once it ended however it ended, in
	 * one store call for the enforced ones, without waiting for the store. Given back once: later calls do nothing.
	 * @return a stage that completes once given back (or once the store failed to: the slots then stay taken until
	 * their hold ends)
	 */
	CompletionStage<Void> release() {
		if (!releasesAtEnd() || !this.released.compareAndSet(false, true)) {
			return CompletableFuture.completedFuture(null);
		}
		int[] slots = new int[this.enforced.size()];
		int count = 0;
		for (int i = 0; i < this.enforced.size(); i++) {
			if (Concurrency.limits(this.enforced.get(i))) {
				slots[count++] = i;
				Concurrency.checkOutlived(this.enforced.get(i), this.admittedAt);
			}
		}
		List<CompletableFuture<Void>> given = new ArrayList<>(1);
		if (count > 0 && this.admission != null) {
			given.add(this.admission.refundAsync(Arrays.copyOf(slots, count)).toCompletableFuture());
		}
		for (int i = 0; i < this.shadows.size(); i++) {
			if (Concurrency.limits(this.shadows.get(i))) {
				given.add(this.shadowAdmissions.get(i).refundAsync(0).toCompletableFuture());
			}
		}
		return (given.size() == 1) ? given.get(0) : CompletableFuture.allOf(given.toArray(new CompletableFuture<?>[0]));
	}

	/** Whether an enforced policy's reservation is settled once the request was served. */
	boolean settlesCosts() {
		if (this.admission == null) {
			return false;
		}
		for (PolicySpec spec : this.enforced) {
			if (spec.hasSettle()) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Settle the reservation of each enforced policy whose cost is known once the request was served: what its settle
	 * expression gives, over the result ({@code #result}) and the cost the handler reported ({@code #reported}, from
	 * {@code RateLimitStatus.settle}).
	 * A cost that cannot be known leaves the reservation as it is.
	 * @param result what the method returned, or {@code null} if it did not complete
	 * @param reported by policy name, the costs the handler reported
	 * @param completed whether the result completed, rather than failed or was cancelled
	 */
	void settleCosts(@Nullable Object result, Map<String, Long> reported, boolean completed) {
		Admission admission = this.admission;
		RequestScope scope = this.scope;
		if (admission == null || scope == null) {
			return;
		}
		for (int i = 0; i < this.enforced.size(); i++) {
			PolicySpec spec = this.enforced.get(i);
			Long cost = reported.get(spec.policy().name());
			long settled = spec.hasSettle() ? spec.settledCost(scope, result, cost, completed) : -1;
			if (settled >= 0) {
				admission.settle(i, settled);
			}
		}
	}

	/**
	 * Give back what policies that do not count this outcome took, in one store call for the enforced ones, without
	 * waiting for the store.
	 * @param status the outcome's HTTP status, asked only if a policy counts by outcome
	 * @return a stage that completes once given back (or once the store failed to: it keeps the units)
	 */
	CompletionStage<Void> settle(IntSupplier status) {
		int outcome = -1;
		int[] refunds = new int[this.enforced.size()];
		int count = 0;
		List<Integer> breaks = new ArrayList<>(0);
		for (int i = 0; i < this.enforced.size(); i++) {
			CountOn countOn = this.enforced.get(i).countOn();
			if (countOn != null && this.admission != null) {
				outcome = (outcome >= 0) ? outcome : status.getAsInt();
				if (!countOn.counts(outcome)) {
					refunds[count++] = i;
				}
				else if (usedTheLastUnit(i)) {
					breaks.add(i);
				}
			}
		}
		List<CompletableFuture<Void>> given = new ArrayList<>(0);
		int[] refunded = Arrays.copyOf(refunds, count);
		RateLimitLockouts lockouts = this.lockouts;
		if (!breaks.isEmpty() && lockouts != null && this.admission != null) {
			// Locked out once what this request gives back is given back: on the request's executor, else here, after
			// a blocking refund (a callback of the store's answer could run on its I/O thread, which must not wait).
			List<PolicySpec> specs = breaks.stream().map(this.enforced::get).toList();
			List<Acquisition> spent = breaks.stream().map(this.acquisitions::get).toList();
			Executor executor = this.executor;
			if (executor == null) {
				this.admission.refund(refunded);
				given.add(lockouts.lockOutIfSpent(specs, spent, null));
			}
			else {
				given.add(this.admission.refundAsync(refunded)
					.toCompletableFuture()
					.thenComposeAsync((ignored) -> lockouts.lockOutIfSpent(specs, spent, null), executor)
					.exceptionally((refused) -> null)); // an executor that refuses it: the counts still reject
			}
		}
		else if (count > 0 && this.admission != null) {
			given.add(this.admission.refundAsync(refunded).toCompletableFuture());
		}
		for (int i = 0; i < this.shadows.size(); i++) {
			CountOn countOn = this.shadows.get(i).countOn();
			if (countOn != null) {
				outcome = (outcome >= 0) ? outcome : status.getAsInt();
				if (!countOn.counts(outcome)) {
					given.add(this.shadowAdmissions.get(i).refundAsync(0).toCompletableFuture());
				}
			}
		}
		return CompletableFuture.allOf(given.toArray(new CompletableFuture<?>[0]));
	}

	private boolean usedTheLastUnit(int index) {
		Penalty penalty = this.enforced.get(index).penalty();
		Decision decision = (this.admission != null) ? this.admission.decision(index) : null;
		return penalty != null && penalty.locks() && this.lockouts != null && decision != null && decision.allowed()
				&& decision.remaining() == 0 && decision.origin() != Decision.Origin.FAIL_OPEN;
	}

}
