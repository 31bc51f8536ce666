package io.github.ratelimit.memory;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.TimeSource;
import io.github.ratelimit.store.RateLimitStore;

/**
 * A {@link RateLimitStore} that keeps its counters in this process: exact under concurrency, bounded in size, and
 * with no background thread.
 * <p>
 * Each key's state is updated under its own (spin) lock, so concurrent requests for one key are decided one after
 * the other and different keys never contend. The store holds at most {@code maxKeys} keys across all policies. When it
 * is full it first drops the keys whose state has expired (their counters are back to fresh, so nothing is
 * forgotten); if every key is still live, a request for a <em>new</em> key is rejected until one expires, rather
 * than evicting a live key and forgetting its count. Keys already tracked keep exact counts whatever the load.
 *
 * @since 0.1.0
 */
public final class InMemoryRateLimitStore implements RateLimitStore {

	private static final Logger logger = System.getLogger(InMemoryRateLimitStore.class.getName());

	private static final long FULL_WARNING_INTERVAL_MILLIS = 60_000;

	private final TimeSource clock;

	private final long maxKeys;

	private final Map<RateLimitPolicy, ConcurrentHashMap<String, KeyState>> tables = new ConcurrentHashMap<>();

	private final AtomicLong size = new AtomicLong();

	/** No key expires before this time, so a purge before it would find nothing. */
	private final AtomicLong nextPurgeAt = new AtomicLong(Long.MAX_VALUE);

	private final AtomicBoolean purging = new AtomicBoolean();

	private final AtomicLong lastFullWarningAt = new AtomicLong(Long.MIN_VALUE);

	private final AtomicLong rejectedNewKeys = new AtomicLong();

	private InMemoryRateLimitStore(TimeSource clock, long maxKeys) {
		this.clock = clock;
		this.maxKeys = maxKeys;
	}

	/**
	 * Create a store on the system clock holding at most the given number of keys.
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
		return acquire(policy, key, cost, true);
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * Allocates nothing for a key already held.
	 */
	@Override
	public boolean tryAcquirePermit(RateLimitPolicy policy, String key, long cost) {
		return acquire(policy, key, cost, false).allowed();
	}

	/**
	 * Decide; when {@code detailed} is false, answer with a shared decision that only says whether the units were
	 * taken, instead of a new one.
	 */
	private Decision acquire(RateLimitPolicy policy, String key, long cost, boolean detailed) {
		if (cost < 1) {
			throw new IllegalArgumentException("'cost' must be at least 1 but was " + cost);
		}
		long now = this.clock.currentTimeMillis();
		ConcurrentHashMap<String, KeyState> table = this.tables.get(policy);
		if (table != null) {
			// The common path, a known key, kept small so that the JIT can inline it whole.
			KeyState state = table.get(key);
			if (state != null) {
				state.lock();
				try {
					if (!state.retired) {
						return state.acquire(policy, now, cost, detailed);
					}
				}
				finally {
					state.unlock();
				}
			}
		}
		return acquireNewKey(policy, key, cost, now, detailed);
	}

	private Decision acquireNewKey(RateLimitPolicy policy, String key, long cost, long now, boolean detailed) {
		ConcurrentHashMap<String, KeyState> table = this.tables.computeIfAbsent(policy,
				(p) -> new ConcurrentHashMap<>());
		while (true) {
			KeyState state = table.get(key);
			boolean created = false;
			if (state == null) {
				if (!reserve(now)) {
					return rejectNewKey(policy, now);
				}
				KeyState fresh = KeyState.create(policy.algorithm());
				state = table.putIfAbsent(key, fresh);
				if (state == null) {
					state = fresh;
					created = true;
				}
				else {
					this.size.decrementAndGet();
				}
			}
			Decision decision;
			long expiresAt;
			state.lock();
			try {
				if (state.retired) {
					table.remove(key, state); // purged or cleared meanwhile: make room for a fresh state
					continue;
				}
				decision = state.acquire(policy, now, cost, detailed);
				expiresAt = created ? state.expiresAt(policy) : Long.MAX_VALUE;
			}
			finally {
				state.unlock();
			}
			// A key's expiry only moves later as it is used, so tracking new keys keeps the earliest one known.
			if (created && expiresAt < this.nextPurgeAt.get()) {
				this.nextPurgeAt.accumulateAndGet(expiresAt, Math::min);
			}
			return decision;
		}
	}

	@Override
	public boolean isLocal() {
		return true;
	}

	/**
	 * Return the number of keys held.
	 * @return the number of keys
	 */
	public long size() {
		return this.size.get();
	}

	/**
	 * Return how many requests for a new key were rejected because the store was full of live keys.
	 * @return the number of rejected requests
	 */
	public long rejectedNewKeys() {
		return this.rejectedNewKeys.get();
	}

	/**
	 * Drop every key whose state has expired.
	 * @return the number of keys dropped
	 */
	public int purgeExpired() {
		return Math.max(0, purge(this.clock.currentTimeMillis()));
	}

	/**
	 * Forget every counter, for tests.
	 */
	public void clear() {
		this.tables.values().forEach((table) -> table.forEach((key, state) -> {
			retire(state);
			table.remove(key, state);
		}));
	}

	private void retire(KeyState state) {
		state.lock();
		try {
			if (!state.retired) {
				state.retired = true;
				this.size.decrementAndGet();
			}
		}
		finally {
			state.unlock();
		}
	}

	private boolean reserve(long now) {
		for (int attempt = 0; attempt < 100; attempt++) {
			long current = this.size.get();
			if (current >= this.maxKeys) {
				if (now < this.nextPurgeAt.get()) {
					return false;
				}
				int purged = purge(now);
				if (purged == 0) {
					return false;
				}
				if (purged < 0) {
					Thread.yield(); // another thread is purging: look again once it has made room
				}
				continue;
			}
			if (this.size.compareAndSet(current, current + 1)) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Drop the keys that have expired by {@code now}.
	 * @return how many were dropped, or -1 if another thread is purging
	 */
	private int purge(long now) {
		if (!this.purging.compareAndSet(false, true)) {
			return -1;
		}
		try {
			int purged = 0;
			long earliest = Long.MAX_VALUE;
			// Keys created during the scan lower this again; the scan's own minimum is merged in at the end.
			this.nextPurgeAt.set(Long.MAX_VALUE);
			for (Map.Entry<RateLimitPolicy, ConcurrentHashMap<String, KeyState>> table : this.tables.entrySet()) {
				RateLimitPolicy policy = table.getKey();
				for (Map.Entry<String, KeyState> entry : table.getValue().entrySet()) {
					KeyState state = entry.getValue();
					state.lock();
					try {
						long expiresAt = state.expiresAt(policy);
						if (expiresAt <= now && !state.retired) {
							state.retired = true;
							table.getValue().remove(entry.getKey(), state);
							this.size.decrementAndGet();
							purged++;
						}
						else {
							earliest = Math.min(earliest, expiresAt);
						}
					}
					finally {
						state.unlock();
					}
				}
			}
			this.nextPurgeAt.accumulateAndGet(earliest, Math::min);
			return purged;
		}
		finally {
			this.purging.set(false);
		}
	}

	private Decision rejectNewKey(RateLimitPolicy policy, long now) {
		this.rejectedNewKeys.incrementAndGet();
		long lastWarning = this.lastFullWarningAt.get();
		boolean due = lastWarning == Long.MIN_VALUE || now < lastWarning
				|| now - lastWarning >= FULL_WARNING_INTERVAL_MILLIS;
		if (due && this.lastFullWarningAt.compareAndSet(lastWarning, now)) {
			logger.log(Level.WARNING, () -> "In-memory rate limit store is full (" + this.maxKeys
					+ " live keys): requests for new keys are rejected until keys expire. Raise ratelimit.memory.max-keys "
					+ "or use the Redis store. (Policy '" + policy.name() + "'; logged at most once a minute.)");
		}
		long retry = Math.max(1, this.nextPurgeAt.get() - now);
		return Decision.rejected(policy.capacity(), 0, retry, retry);
	}

	/**
	 * Builder for {@link InMemoryRateLimitStore}.
	 */
	public static final class Builder {

		private TimeSource clock = TimeSource.system();

		private long maxKeys = 100_000;

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
		 * Set the maximum number of keys held across all policies; 100,000 by default.
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
		 * Build the store.
		 * @return the store
		 */
		public InMemoryRateLimitStore build() {
			return new InMemoryRateLimitStore(this.clock, this.maxKeys);
		}

	}

}
