package io.github.ratelimit.engine;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitListener;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.limiter.Admission;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.web.AppliedRateLimit;
import org.jspecify.annotations.Nullable;

/**
 * The waits of requests over a limit with {@code max-wait} (see {@link Waiting}): which a layer needs, whether its
 * keys' queues on this instance have room, and the waiting itself, blocking the thread of a blocking stack or
 * delaying the stage of a non-blocking one on a timer. An instance holds at most {@value #MAX_WAITING} waiting
 * requests in all, and counts the queues of {@value #MAX_KEYS} keys at most: a request beyond them waits for nothing.
 */
final class Waits {

	/** The most keys with waiting requests at once on this instance. */
	static final int MAX_KEYS = 10_000;

	/** The most requests waiting at once on this instance, whatever their keys. */
	static final int MAX_WAITING = 1_000;

	private final ConcurrentHashMap<Queue, AtomicInteger> queues = new ConcurrentHashMap<>();

	private final AtomicInteger waiting = new AtomicInteger();

	private final RateLimitListener listener;

	Waits(RateLimitListener listener) {
		this.listener = listener;
	}

	/**
	 * Whether a request of this key may not wait: its queue, or this instance's room for waiting requests, is full.
	 * It is then counted under the real bucket, which rejects it as without waiting.
	 */
	boolean full(String policy, String key, int maxQueued) {
		if (this.waiting.get() >= MAX_WAITING) {
			return true;
		}
		AtomicInteger queued = this.queues.get(new Queue(policy, key));
		return (queued != null) ? queued.get() >= maxQueued : this.queues.size() >= MAX_KEYS;
	}

	/**
	 * The wait of an admitted layer whose buckets reserved a future turn, or {@code null} if none did.
	 */
	@Nullable Wait reserved(LayerPlan plan, Admission admission) {
		Wait wait = null;
		for (int i = 0; i < plan.checksFrom(); i++) {
			Decision decision = admission.decision(i);
			RateLimitPolicy policy = plan.real(i);
			RateLimitPolicy counted = plan.acquisitions().get(i).policy();
			if (counted == policy || decision == null || !decision.allowed() || !decision.isKnown()) {
				continue; // counted without a reserve, or a store that failed: nothing to wait for
			}
			long millis = Waiting.wait(policy, counted, decision);
			if (millis > 0) {
				wait = (wait != null) ? wait : new Wait(new ArrayList<>(1), new ArrayList<>(1));
				wait.add(i, millis);
			}
		}
		return wait;
	}

	/**
	 * The wait of a rejected layer until its windows have room, or {@code null} if it was admitted or cannot wait:
	 * every policy that rejected it waits, each for no longer than its {@code max-wait}, none is a bucket (whose turn
	 * the store reserves instead), and the key is not locked out.
	 */
	@Nullable Wait retry(LayerPlan plan, @Nullable Admission admission, List<AppliedRateLimit> applied) {
		if (admission == null || applied.stream().allMatch((limit) -> limit.decision().allowed())
				|| applied.stream().anyMatch((limit) -> limit.decision().origin() == Decision.Origin.PENALTY)) {
			return null; // admitted, or locked out
		}
		Wait wait = null;
		for (int i = 0; i < plan.checksFrom(); i++) {
			Decision decision = admission.decision(i);
			if (decision == null || decision.allowed()) {
				continue;
			}
			Waiting waiting = plan.enforced().get(i).waiting();
			long millis = decision.retryAfterMillis();
			if (waiting == null || plan.real(i).algorithm().isBucket() || !decision.isKnown()
					|| millis == Decision.NEVER || millis > waiting.maxWaitMillis()) {
				return null;
			}
			wait = (wait != null) ? wait : new Wait(new ArrayList<>(1), new ArrayList<>(1));
			wait.add(i, Math.max(1, millis));
		}
		return wait;
	}

	/**
	 * Wait here, blocking the thread of a blocking stack (a virtual thread parks no platform thread), if the keys'
	 * queues have room.
	 * @return whether it waited its whole turn: not if a queue was full, or the thread was interrupted (a request that
	 * went on before its turn would pass more than the limit)
	 */
	boolean waitHere(LayerPlan plan, Wait wait) {
		if (!enter(plan, wait)) {
			return false;
		}
		try {
			Thread.sleep(wait.longest());
			return true;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return false;
		}
		finally {
			leave(plan, wait);
		}
	}

	/**
	 * A stage that completes after the wait, blocking no thread, if the keys' queues have room: what a non-blocking
	 * stack waits on. It completes on the JDK's timer thread; what follows is the store's asynchronous call, or
	 * the outcome.
	 * @return the stage, or {@code null} if the request may not wait
	 */
	@Nullable CompletableFuture<Void> waitLater(LayerPlan plan, Wait wait) {
		if (!enter(plan, wait)) {
			return null;
		}
		return new CompletableFuture<Void>().completeOnTimeout(null, wait.longest(), TimeUnit.MILLISECONDS)
			.whenComplete((ignored, failure) -> leave(plan, wait));
	}

	/** Take a place in the queue of each key that waits, if each has room; if not, none is held. */
	private boolean enter(LayerPlan plan, Wait wait) {
		if (this.waiting.incrementAndGet() > MAX_WAITING) {
			this.waiting.decrementAndGet();
			return false;
		}
		List<Queue> entered = new ArrayList<>(wait.indexes.size());
		for (int index : wait.indexes) {
			Waiting waiting = plan.enforced().get(index).waiting();
			Queue queue = new Queue(plan.real(index).name(), plan.acquisitions().get(index).key());
			if (waiting == null || !enter(queue, waiting.maxQueued())) {
				entered.forEach(this::leave);
				this.waiting.decrementAndGet();
				return false;
			}
			entered.add(queue);
		}
		return true;
	}

	private boolean enter(Queue queue, int max) {
		if (this.queues.size() >= MAX_KEYS && !this.queues.containsKey(queue)) {
			return false;
		}
		boolean[] entered = new boolean[1];
		this.queues.compute(queue, (key, count) -> {
			AtomicInteger waiting = (count != null) ? count : new AtomicInteger();
			entered[0] = waiting.get() < max;
			if (entered[0]) {
				waiting.incrementAndGet();
			}
			return (waiting.get() == 0) ? null : waiting;
		});
		return entered[0];
	}

	/** Leave the queues a request entered, once its wait is over, and say how long each policy made it wait. */
	private void leave(LayerPlan plan, Wait wait) {
		for (int i = 0; i < wait.indexes.size(); i++) {
			int index = wait.indexes.get(i);
			leave(new Queue(plan.real(index).name(), plan.acquisitions().get(index).key()));
			this.listener.onWait(plan.real(index), wait.millis.get(i));
		}
		this.waiting.decrementAndGet();
	}

	private void leave(Queue queue) {
		this.queues.computeIfPresent(queue, (key, count) -> (count.decrementAndGet() <= 0) ? null : count);
	}

	/**
	 * The limits a request that may not wait is rejected with: each waiting bucket's decision, as the real bucket
	 * would have rejected it, with its wait as the retry.
	 */
	static List<AppliedRateLimit> rejections(LayerPlan plan, Wait wait, List<AppliedRateLimit> applied) {
		List<AppliedRateLimit> rejected = new ArrayList<>(applied);
		for (int i = 0; i < wait.indexes.size(); i++) {
			RateLimitPolicy policy = plan.real(wait.indexes.get(i));
			long millis = wait.millis.get(i);
			rejected.removeIf((limit) -> limit.policy().name().equals(policy.name()));
			rejected.add(new AppliedRateLimit(policy, new Decision(false, policy.capacity(), 0, millis, millis, millis,
					Decision.Origin.STORE), plan.enforced().get(wait.indexes.get(i)).isSharedByEveryClient()));
		}
		return rejected;
	}

	/** The indexes of a layer's policies that wait, each with its wait. */
	record Wait(List<Integer> indexes, List<Long> millis) {

		void add(int index, long waitMillis) {
			this.indexes.add(index);
			this.millis.add(waitMillis);
		}

		long longest() {
			long longest = 0;
			for (long wait : this.millis) {
				longest = Math.max(longest, wait);
			}
			return longest;
		}

	}

	private record Queue(String policy, String key) {
	}

}
