package io.github.ratelimit.memory;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.TimeSource;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.OneByOne;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.Reservation;
import org.jspecify.annotations.Nullable;

/**
 * A {@link RateLimitStore} that keeps its counters in this process: exact under concurrency, bounded in size, and
 * with no background thread.
 * <p>
 * Each key's state is updated under its own (spin) lock, so concurrent requests for one key are decided one after
 * the other, different keys never contend, and a decision on a key already held takes no lock shared with other
 * keys (but for the rare decision that doubles the units the key holds, see below).
 * <p>
 * <strong>Bounds.</strong> The store holds at most {@link Builder#maxKeysPerPolicy(long) maxKeysPerPolicy} keys of
 * any one policy and at most {@link Builder#maxKeys(long) maxKeys} keys in all. It never rejects a request because it
 * is full: to make room for a new key it drops a key of the same policy if that policy is at its bound, else, if the
 * total is reached, a key of the policy holding the most keys. A flood of new keys on one policy therefore evicts
 * that policy's keys first, and takes keys from another policy only while that one holds more keys than the flooded
 * one (sharing the total bound max-min fairly); with per-policy bounds adding up to no more than the total, policies
 * never evict each other's keys.
 * <p>
 * <strong>Which key goes.</strong> Within a policy, the key whose state is nearest a fresh one's:
 * <ol>
 * <li>a key whose state has expired, that is, is back to fresh: nothing is forgotten, and it does not count as an
 * {@link #evictions() eviction};
 * <li>else the key that has held the fewest units against its client: keys are ranked by the most units
 * ({@code capacity - remaining}) they have held after any decision, rounded down to a power of two (1, 2–3, 4–7,
 * ...), one rank higher once a request of theirs was rejected, and the newest key of the lowest rank goes. A flood
 * of keys used once therefore evicts its own keys, and an established client stays held.
 * </ol>
 * <strong>An eviction forgives nothing.</strong> Each policy that has evicted remembers what its evicted keys held,
 * for as long as it could still count (one to two <em>holds</em>: the window for {@code FIXED}, where only the
 * current window is remembered, and {@code SLIDING_LOG}, two windows for {@code SLIDING_COUNTER}, the time to refill
 * the bucket for the buckets), in two tiers under a secret hash: the recent evictions, exact, where a key that comes
 * back resumes exactly where it was (a full bucket of them gives up the entry of the key evicted least often); and
 * a floor, a count-min sketch of maxima that an entry given up raises to all the units its key held, which charges a
 * key not among the recent evictions the least of its four cells. So whatever the order of requests, over any number
 * of keys and whatever the bounds, the requests admitted for a key are ones the policy admits with unbounded memory.
 * <strong>The price:</strong> a key never seen shares its four cells with given-up keys with a probability that
 * grows with the keys given up per column, and is then charged what they held, up to its whole quota; a flood larger
 * than the memory of evicted keys can so turn new clients away, for at most two holds after it (see
 * {@code docs/reliability.md}). Keys are ranked by what they took themselves, so such a flood does not evict
 * established clients.
 * <p>
 * <strong>Cost.</strong> Nothing scans the keys. Each policy's keys are also in an expiry min-heap and on rank lists
 * (see {@code PolicyTable}), both intrusive and guarded by a per-policy monitor that decisions on known keys do not
 * take. Finding an expired key takes {@code O(1)} to see there is none, or {@code O(log n)} amortised per admission
 * (a key's heap entry is refreshed lazily, at most once per admission since the last refresh); finding the lowest
 * rank takes {@code O(1)}; inserting or dropping a key takes {@code O(log n)}. A key moves to a higher rank list (under
 * the policy's monitor) at most {@code 1 + log2(capacity)} times while held, and never down: a key that has held many
 * units stays ranked high while it lives, erring towards keeping it. Both choices are exact and deterministic, unlike
 * sampled eviction, so the guarantees above always hold rather than with high probability. When the total bound is
 * reached, choosing the policy to evict from reads the size of each policy, {@code O(p)} in the number of policies,
 * which the configuration fixes. Each new key also drops a key whose state has been back to fresh for a second, if
 * it finds one at once, so memory follows the live keys without a background thread; and every 1,024 new keys the
 * store looks over its policies ({@code O(p)}), drops a few such keys of each, and drops the policies left with no
 * key and nothing remembered that counts, so that policies built per tenant take no room once their keys are gone.
 * <p>
 * <strong>Memory.</strong> A key takes a couple of hundred bytes (its state, map entry, key string and heap slot),
 * and a policy that has evicted keys its memory of them, sized at its first eviction and fixed: 72 to 144 bytes per
 * key it held then, 3,328 at least (2 to 4 recent evictions of 20 bytes and 1 to 2 floor columns of 32 bytes per
 * key); except under {@code SLIDING_LOG}, whose log holds up to {@code min(limit, window in ms, admitted requests in a
 * window)} entries of 16 bytes in arrays that only grow while the key is held: up to about
 * {@code 32·min(limit, window)} bytes more per key, which the bounds on keys do not cap.
 *
 * @since 0.1.0
 */
public final class InMemoryRateLimitStore implements RateLimitStore {

	/** The default of {@link Builder#maxKeys(long)}: at most 100,000 keys in all. */
	public static final long DEFAULT_MAX_KEYS = 100_000;

	/**
	 * The default of {@link Builder#maxKeysPerPolicy(long)}: the same as {@link #DEFAULT_MAX_KEYS}, so that an
	 * application with one busy policy can use the whole store; a flood on one policy then evicts its own keys, and
	 * another policy's only while that one holds more keys than the flooded one.
	 */
	public static final long DEFAULT_MAX_KEYS_PER_POLICY = DEFAULT_MAX_KEYS;

	/** How many new keys (a power of two) between two looks for tables to drop. */
	private static final int SWEEP_EVERY_NEW_KEYS = 1_024;

	/** The most keys of one policy, whatever the bounds: the size of the largest array a policy's heap can use. */
	private static final int MAX_KEYS_PER_TABLE = Integer.MAX_VALUE - 8;

	private static final Logger logger = System.getLogger(InMemoryRateLimitStore.class.getName());

	private static final long EVICTION_WARNING_INTERVAL_MILLIS = 60_000;

	private final TimeSource clock;

	private final long maxKeys;

	private final int maxKeysPerPolicy;

	/** New keys so far, to look for tables to drop now and then rather than scan on every new key. */
	private final AtomicLong newKeys = new AtomicLong();

	private final PolicyTables tables;

	/** The same tables by the configurations that decide on them (see {@link PolicyTables}): read by every decision. */
	private final ConcurrentHashMap<RateLimitPolicy, PolicyTable> byConfiguration;

	private final AtomicLong lastEvictionWarningAt = new AtomicLong(Long.MIN_VALUE);

	private InMemoryRateLimitStore(TimeSource clock, long maxKeys, long maxKeysPerPolicy) {
		this.clock = clock;
		this.maxKeys = maxKeys;
		this.maxKeysPerPolicy = (int) Math.min(Math.min(maxKeysPerPolicy, maxKeys), MAX_KEYS_PER_TABLE);
		this.tables = new PolicyTables(maxKeys, this.maxKeysPerPolicy);
		this.byConfiguration = this.tables.byConfiguration;
	}

	/**
	 * Create a store on the system clock holding at most the given number of keys, of one policy or in all.
	 * @param maxKeys the maximum number of keys, at least 1
	 * @return the store
	 */
	public static InMemoryRateLimitStore create(long maxKeys) {
		return builder().maxKeys(maxKeys).build();
	}

	/**
	 * Start building a store.
	 * @return a builder
	 */
	public static Builder builder() {
		return new Builder();
	}

	@Override
	public Decision tryAcquire(RateLimitPolicy policy, String key, long cost) {
		if (cost < 1) {
			throw new IllegalArgumentException("'cost' must be at least 1 but was " + cost);
		}
		return decide(policy, key, cost, this.clock.currentTimeMillis());
	}

	@Override
	public Reservation tryAcquireAll(List<Acquisition> acquisitions) {
		// One time for all, so that each refund finds its admission (the sliding log keys entries by time).
		long now = this.clock.currentTimeMillis();
		return OneByOne.tryAcquireAll(acquisitions, () -> now,
				(acquisition, at) -> decide(acquisition.policy(), acquisition.key(), acquisition.cost(), at), this);
	}

	private Decision decide(RateLimitPolicy policy, String key, long cost, long now) {
		PolicyTable table = this.byConfiguration.get(policy);
		if (table != null) {
			// The common path, a known key, kept small so that the JIT can inline it whole.
			KeyState state = table.states.get(key);
			if (state != null) {
				Decision decision = acquire(table, policy, state, now, cost);
				if (decision != null) {
					return decision;
				}
			}
		}
		return acquireNewKey(policy, key, cost, now);
	}

	/**
	 * Decide on a state found in the table.
	 * @return the decision, or {@code null} if the state was dropped meanwhile
	 */
	private static @Nullable Decision acquire(PolicyTable table, RateLimitPolicy policy, KeyState state, long now,
			long cost) {
		Decision decision;
		boolean promote;
		state.lock();
		try {
			if (state.retired) {
				return null;
			}
			decision = state.acquire(policy, now, cost);
			promote = state.raiseRank(decision);
		}
		finally {
			state.unlock();
		}
		if (promote) {
			table.promote(state); // after unlocking: the table's monitor comes first in the lock order
		}
		return decision;
	}

	private Decision acquireNewKey(RateLimitPolicy policy, String key, long cost, long now) {
		if ((this.newKeys.incrementAndGet() & (SWEEP_EVERY_NEW_KEYS - 1)) == 0) {
			this.tables.dropIdle(now);
		}
		PolicyTable table = this.tables.table(policy);
		long evictionsBefore = this.tables.evictions.get();
		try {
			while (true) {
				KeyState state = table.states.get(key);
				if (state != null) {
					Decision decision = acquire(table, policy, state, now, cost);
					if (decision != null) {
						return decision;
					}
					continue; // dropped meanwhile: look again
				}
				this.tables.reserve(table, now);
				Decision decision = table.acquireNew(policy, key, cost, now);
				if (decision == PolicyTable.RETIRED) {
					this.tables.held.decrementAndGet(); // dropped meanwhile, being empty: take the policy's new table
					this.byConfiguration.remove(policy, table);
					table = this.tables.table(policy);
					continue;
				}
				if (decision != null) {
					return decision;
				}
				this.tables.held.decrementAndGet(); // inserted by another thread meanwhile: decide on its state
			}
		}
		finally {
			if (this.tables.evictions.get() != evictionsBefore) {
				warnOfEvictions(policy, now);
			}
		}
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * An unknown key is not inserted, so reading it never evicts another.
	 */
	@Override
	public Decision peek(RateLimitPolicy policy, String key) {
		long now = this.clock.currentTimeMillis();
		PolicyTable table = this.tables.existing(policy);
		if (table != null) {
			return table.peek(policy, key, now);
		}
		return KeyState.create(policy.algorithm(), key).acquire(policy, now, policy.capacity() + 1);
	}

	@Override
	public void refund(Acquisition acquisition, long countedAtMillis) {
		PolicyTable table = this.tables.existing(acquisition.policy());
		KeyState state = (table != null) ? table.states.get(acquisition.key()) : null;
		if (state == null) {
			return; // evicted or reset: nothing it holds was taken by this acquisition
		}
		state.lock();
		try {
			if (!state.retired) {
				state.refund(acquisition.policy(), countedAtMillis, acquisition.cost());
			}
		}
		finally {
			state.unlock();
		}
	}

	@Override
	public void charge(Acquisition acquisition, long countedAtMillis) {
		PolicyTable table = this.tables.existing(acquisition.policy());
		KeyState state = (table != null) ? table.states.get(acquisition.key()) : null;
		if (state == null) {
			return; // evicted or reset since it was admitted: nothing of it is held to add to
		}
		state.lock();
		try {
			if (!state.retired) {
				state.charge(acquisition.policy(), countedAtMillis, acquisition.cost());
			}
		}
		finally {
			state.unlock();
		}
	}

	@Override
	public long currentTimeMillis() {
		return this.clock.currentTimeMillis();
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * The key's state is dropped at once; a decision on it in progress completes, and the next one starts fresh.
	 */
	@Override
	public void reset(RateLimitPolicy policy, String key) {
		PolicyTable table = this.tables.existing(policy);
		if (table != null) {
			table.reset(key);
		}
	}

	@Override
	public boolean isLocal() {
		return true;
	}

	/**
	 * Return the number of keys held, across policies.
	 * @return the number of keys, at most {@code maxKeys}
	 */
	public long size() {
		return this.tables.held.get();
	}

	/**
	 * Return the number of keys held for one policy.
	 * @param policy the policy
	 * @return the number of keys, at most {@code maxKeysPerPolicy}
	 */
	public long size(RateLimitPolicy policy) {
		PolicyTable table = this.tables.existing(policy);
		return (table != null) ? table.size() : 0;
	}

	/**
	 * Return how many live keys were evicted to make room for new ones: each forgave what its state held against its
	 * client. Keys dropped because they had expired forgave nothing and are not counted.
	 * @return the number of keys evicted
	 */
	public long evictions() {
		return this.tables.evictions.get();
	}

	/**
	 * Drop every key whose state has expired, and the policies left with no key, to release their memory at once;
	 * the store otherwise drops expired keys as new keys come, without scanning. Takes {@code O(log n)} per key
	 * dropped.
	 * @return the number of keys dropped
	 */
	public int purgeExpired() {
		long now = this.clock.currentTimeMillis();
		int dropped = 0;
		for (PolicyTable table : this.tables.all()) {
			dropped += table.purgeExpired(now);
		}
		this.tables.dropIdle(now);
		return dropped;
	}

	/** The bytes of the arrays remembering evicted keys, across policies (see {@link PolicyTables#evictedKeysBytes}). */
	long evictedKeysBytes() {
		return this.tables.evictedKeysBytes();
	}

	/** How many policies the store holds a table for: those with keys held or remembered. */
	int policies() {
		return this.tables.size();
	}

	/**
	 * Forget every counter.
	 */
	@Override
	public void clear() {
		this.tables.all().forEach(PolicyTable::clear);
	}

	private void warnOfEvictions(RateLimitPolicy policy, long now) {
		long lastWarning = this.lastEvictionWarningAt.get();
		boolean due = lastWarning == Long.MIN_VALUE || now < lastWarning
				|| now - lastWarning >= EVICTION_WARNING_INTERVAL_MILLIS;
		if (due && this.lastEvictionWarningAt.compareAndSet(lastWarning, now)) {
			logger.log(Level.WARNING, () -> "In-memory rate limit store is full (" + this.maxKeys + " keys, "
					+ this.maxKeysPerPolicy + " per policy): evicting live keys, the least used first, which "
					+ "resume where they were if they come back; under a large flood, new clients may find up to "
					+ "their whole quota counted, for two windows or refills at most. Raise the bounds "
					+ "(ratelimit.memory.*) or use the Redis store. (Policy '" + policy.name() + "'; evictions so far: "
					+ this.tables.evictions.get()
					+ "; logged at most once a minute.)");
		}
	}

	/**
	 * Builder for {@link InMemoryRateLimitStore}.
	 */
	public static final class Builder {

		private TimeSource clock = TimeSource.system();

		private long maxKeys = DEFAULT_MAX_KEYS;

		private long maxKeysPerPolicy = DEFAULT_MAX_KEYS_PER_POLICY;

		private Builder() {
		}

		/**
		 * Set the clock; the system clock by default.
		 * @param clock the clock
		 * @return this builder
		 */
		public Builder clock(TimeSource clock) {
			this.clock = clock;
			return this;
		}

		/**
		 * Set the maximum number of keys held across all policies;
		 * {@value InMemoryRateLimitStore#DEFAULT_MAX_KEYS} by default.
		 * @param maxKeys the maximum, at least 1
		 * @return this builder
		 */
		public Builder maxKeys(long maxKeys) {
			if (maxKeys < 1) {
				throw new IllegalArgumentException("'maxKeys' must be at least 1 but was " + maxKeys);
			}
			this.maxKeys = maxKeys;
			return this;
		}

		/**
		 * Set the maximum number of keys held for any one policy;
		 * {@value InMemoryRateLimitStore#DEFAULT_MAX_KEYS_PER_POLICY} by default. A value above
		 * {@link #maxKeys(long) maxKeys} acts as {@code maxKeys}. Per-policy bounds that add up to no more than
		 * {@code maxKeys} keep a flood on one policy from evicting any other policy's keys.
		 * @param maxKeysPerPolicy the maximum, at least 1
		 * @return this builder
		 */
		public Builder maxKeysPerPolicy(long maxKeysPerPolicy) {
			if (maxKeysPerPolicy < 1) {
				throw new IllegalArgumentException(
						"'maxKeysPerPolicy' must be at least 1 but was " + maxKeysPerPolicy);
			}
			this.maxKeysPerPolicy = maxKeysPerPolicy;
			return this;
		}

		/**
		 * Build the store.
		 * @return the store
		 */
		public InMemoryRateLimitStore build() {
			return new InMemoryRateLimitStore(this.clock, this.maxKeys, this.maxKeysPerPolicy);
		}

	}

}
