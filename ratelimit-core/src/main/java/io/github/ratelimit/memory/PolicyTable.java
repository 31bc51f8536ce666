package io.github.ratelimit.memory;

import java.util.Arrays;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;
import org.jspecify.annotations.Nullable;

/**
 * The keys of one policy in an {@link InMemoryRateLimitStore}, with what it takes to choose, without scanning, the
 * key to drop when room is needed. Besides the map from key to state, every state is in two intrusive structures:
 * <ul>
 * <li>The <em>expiry heap</em>, a binary min-heap ordered by {@link KeyState#listedExpiry}, a lower bound of the
 * state's expiry. Decisions on a known key do not touch it, although they push the key's expiry later: when a state
 * reaches the top with its listed expiry passed, it is either dropped (it is back to fresh) or listed again at its
 * real expiry. A state is listed again only if it was admitted since it was last listed, so the heap costs
 * {@code O(log n)} amortised per admission, and the top says in {@code O(1)} whether any state may have expired.
 * <li>The <em>rank lists</em>: a state is on the list of its {@link KeyState#rank} (the most units it has held against
 * its client, to a power of two), oldest first, and a bit mask says which lists are not empty. A state moves to a
 * higher list when its rank rises, at most once per doubling of its units, so at most {@code 1 + log2(capacity)}
 * times while it is held; it never moves down.
 * </ul>
 * Both are guarded by this table's monitor. A decision on a known key takes only that key's lock, and this monitor
 * only on the rare decisions that raise its rank. The lock order is this monitor, then a key's lock.
 */
final class PolicyTable {

	private static final int RANKS = Long.SIZE;

	/** How many states a new key's insertion may look at to drop one that expired, so memory follows live keys. */
	private static final int RECLAIM_STEPS = 2;

	/** How many expired states a look for idle tables drops at most per table. */
	private static final int SWEEP_DROPS = 4;

	/**
	 * How long a state stays after it is back to fresh before a new key's insertion drops it. A client whose bucket
	 * refills between its requests comes back to a state just expired: dropped at once, every request would rebuild
	 * its key (five times slower on 10,000 token buckets). Evictions under the bounds drop expired states at once.
	 */
	static final long RECLAIM_AFTER_MILLIS = 1_000;

	/**
	 * The configuration the table counts under: the last to decide on it. A change of the policy's limit or burst
	 * keeps its table, and each decision counts under its own configuration; this one serves the table's own
	 * bookkeeping (eviction, what evicted keys held).
	 */
	volatile RateLimitPolicy policy;

	/** The states, read without the monitor by decisions on known keys, changed only under the monitor. */
	final ConcurrentHashMap<String, KeyState> states = new ConcurrentHashMap<>();

	private final int maxKeys;

	/** The store's count of keys held across policies, including slots reserved for keys about to be inserted. */
	private final AtomicLong held;

	/** The store's count of live keys evicted. */
	private final AtomicLong evictions;

	/** Written under the monitor; read without it to choose a table to evict from. */
	private volatile int size;

	private KeyState[] heap = new KeyState[16];

	private final KeyState[] heads = new KeyState[RANKS];

	private final KeyState[] tails = new KeyState[RANKS];

	/** Bit {@code r} is set iff the rank list {@code r} is not empty. */
	private long ranks;

	/** What evicted keys held, from the first eviction on. */
	private @Nullable EvictedKeys evicted;

	/** What {@link #acquireNew} answers once the table was dropped: the caller takes the store's new table. */
	static final Decision RETIRED = new Decision(false, 0, 0, 0, 0, Decision.Origin.STORE);

	/** Whether the store dropped this table, empty and with nothing remembered that counts. Guarded by the monitor. */
	private boolean retired;

	PolicyTable(RateLimitPolicy policy, int maxKeys, AtomicLong held, AtomicLong evictions) {
		this.policy = policy;
		this.maxKeys = maxKeys;
		this.held = held;
		this.evictions = evictions;
	}

	int size() {
		return this.size;
	}

	/**
	 * Count under another configuration of the same state from now on (a changed limit or burst).
	 * @param policy the configuration
	 * @return the configuration it replaces, or {@code null} if the table was dropped: the caller then creates
	 * another
	 */
	synchronized @Nullable RateLimitPolicy adopt(RateLimitPolicy policy) {
		if (this.retired) {
			return null;
		}
		RateLimitPolicy previous = this.policy;
		this.policy = policy;
		return previous;
	}

	/** The bytes of the arrays of this table's memory of evicted keys, 0 before its first eviction. */
	synchronized long evictedKeysBytes() {
		EvictedKeys evicted = this.evicted;
		return (evicted != null) ? evicted.arrayBytes() : 0;
	}

	boolean isFull() {
		return this.size >= this.maxKeys;
	}

	/**
	 * Decide the first request of a key the caller did not find, once the caller has reserved a slot for it in the
	 * store's count of keys held. Make room under this policy's bound first.
	 * @param policy the configuration it is decided under
	 * @param key the key
	 * @param cost the cost
	 * @param now the current time
	 * @return the decision, or {@code null} if another thread inserted the key meanwhile: the caller then releases
	 * its slot and decides on that key's state
	 */
	synchronized @Nullable Decision acquireNew(RateLimitPolicy policy, String key, long cost, long now) {
		if (this.retired) {
			return RETIRED;
		}
		if (this.states.containsKey(key)) {
			return null;
		}
		while (this.size >= this.maxKeys) {
			evict(now);
		}
		dropExpired(now - RECLAIM_AFTER_MILLIS, RECLAIM_STEPS);
		// Decided before it is published, so no other thread can see the state, or evict it, before this counts.
		KeyState state = returning(policy, key, now, true);
		Decision decision = state.acquire(policy, now, cost);
		state.raiseRank(decision);
		state.listedExpiry = state.expiresAt(policy);
		heapAdd(state);
		link(state, state.rank);
		this.size++;
		this.states.put(key, state);
		return decision;
	}

	/**
	 * Return a key's state as its next request would find it, without inserting it or taking anything.
	 * @param policy the configuration it is read under
	 * @param key the key
	 * @param now the current time
	 * @return what a request that can never pass is told: the remaining units and the reset
	 */
	Decision peek(RateLimitPolicy policy, String key, long now) {
		long probe = policy.capacity() + 1;
		KeyState state = this.states.get(key);
		if (state != null) {
			state.lock();
			try {
				if (!state.retired) {
					return state.acquire(policy, now, probe);
				}
			}
			finally {
				state.unlock();
			}
		}
		synchronized (this) {
			return returning(policy, key, now, false).acquire(policy, now, probe);
		}
	}

	/**
	 * Create the state of a key not held: fresh, charged with what it held when last evicted (or what the floor
	 * charges it, at least as much), if anything, so that an eviction forgives nothing.
	 */
	private KeyState returning(RateLimitPolicy policy, String key, long now, boolean forgetPardon) {
		KeyState state = KeyState.create(policy.algorithm(), key);
		EvictedKeys evicted = this.evicted;
		if (evicted != null) {
			long charge = forgetPardon ? evicted.charge(key, now) : evicted.estimate(key, now);
			if (charge > 0) {
				state.returnCharge = Math.min(policy.capacity(), charge);
				state.acquire(policy, now, state.returnCharge);
			}
		}
		return state;
	}

	/**
	 * Drop a few states expired for a while, then retire this table if it holds no key and remembers nothing that still counts:
	 * the store then drops it, so that policies whose keys are all gone (a tenant's variant gone quiet) take no room.
	 * The few states bound the time the table is locked; a larger table empties as its keys are reclaimed.
	 * @param now the current time
	 * @return whether it was retired
	 */
	synchronized boolean retireIfIdle(long now) {
		for (int i = 0; i < SWEEP_DROPS && dropExpired(now - RECLAIM_AFTER_MILLIS, RECLAIM_STEPS); i++) {
			// dropped one
		}
		if (this.size == 0 && (this.evicted == null || this.evicted.isLapsed(now))) {
			this.retired = true;
		}
		return this.retired;
	}

	/**
	 * Move a state whose rank rose to its new rank list, unless another thread did, or it was dropped meanwhile.
	 * @param state the state, not locked by the caller
	 */
	synchronized void promote(KeyState state) {
		int rank;
		state.lock();
		try {
			rank = state.retired ? -1 : state.rank;
		}
		finally {
			state.unlock();
		}
		if (rank > state.listedRank) {
			unlink(state);
			link(state, rank);
		}
	}

	/**
	 * Drop one state, as {@link #evict(long)} chooses it, to make room in the store's total, unless this table holds
	 * fewer than {@code atLeast} states (the caller chose it when it held that many).
	 * @param now the current time
	 * @param atLeast the fewest states this table must hold to give one up
	 * @return whether a state was dropped
	 */
	synchronized boolean evictOne(long now, int atLeast) {
		if (this.size == 0 || this.size < atLeast) {
			return false;
		}
		evict(now);
		return true;
	}

	/**
	 * Forget a key's state, if held.
	 * @param key the key
	 */
	synchronized void reset(String key) {
		if (this.evicted != null) {
			this.evicted.pardon(key);
		}
		KeyState state = this.states.get(key);
		if (state != null) {
			state.lock();
			try {
				retire(state);
			}
			finally {
				state.unlock();
			}
			detach(state);
		}
	}

	/**
	 * Drop every state that has expired.
	 * @param now the current time
	 * @return how many were dropped
	 */
	synchronized int purgeExpired(long now) {
		int dropped = 0;
		while (dropExpired(now, Integer.MAX_VALUE)) {
			dropped++;
		}
		return dropped;
	}

	/**
	 * Forget every state.
	 */
	synchronized void clear() {
		for (int i = 0; i < this.size; i++) {
			KeyState state = this.heap[i];
			state.lock();
			try {
				retire(state);
			}
			finally {
				state.unlock();
			}
		}
		this.held.addAndGet(-this.size);
		this.size = 0;
		this.heap = new KeyState[16];
		Arrays.fill(this.heads, null);
		Arrays.fill(this.tails, null);
		this.ranks = 0;
		this.evicted = null;
	}

	/**
	 * Drop one state, of which there is at least one: an expired one if any (nothing is forgotten), else the newest
	 * on the lowest rank list (among keys that held as much, a flood's own newest key rather than an established
	 * client's), remembering what it held so that it resumes there if it comes back.
	 */
	private void evict(long now) {
		if (dropExpired(now, Integer.MAX_VALUE)) {
			return;
		}
		while (true) {
			int rank = Long.numberOfTrailingZeros(this.ranks);
			KeyState state = this.tails[rank];
			int actual;
			long held = 0;
			state.lock();
			try {
				actual = state.rank;
				if (actual == rank) {
					held = state.held(this.policy, now);
					retire(state);
				}
			}
			finally {
				state.unlock();
			}
			if (actual == rank) {
				detach(state);
				EvictedKeys evicted = this.evicted;
				if (evicted == null) {
					evicted = new EvictedKeys(this.policy, this.size + 1);
					this.evicted = evicted;
				}
				evicted.record(state.key, held, now);
				this.evictions.incrementAndGet();
				return;
			}
			// Its rank rose and the deciding thread has not moved it yet: move it now and look again.
			unlink(state);
			link(state, actual);
		}
	}

	/**
	 * Drop the state with the earliest expiry if it has expired by {@code now}, first listing again, at their real
	 * expiry, at most {@code maxSteps} states found to expire later than listed.
	 * @return whether a state was dropped
	 */
	private boolean dropExpired(long now, int maxSteps) {
		for (int step = 0; step < maxSteps && this.size > 0; step++) {
			KeyState state = this.heap[0];
			if (state.listedExpiry > now) {
				return false; // every state expires later than it is listed, so none has expired
			}
			long expiresAt;
			state.lock();
			try {
				// Checked and retired under one hold of the lock, so a decision cannot slip in between.
				expiresAt = state.expiresAt(this.policy);
				if (expiresAt <= now) {
					retire(state);
				}
			}
			finally {
				state.unlock();
			}
			if (expiresAt <= now) {
				detach(state);
				return true;
			}
			state.listedExpiry = expiresAt;
			siftDown(0);
		}
		return false;
	}

	/** Mark a locked state retired and remove it from the map, so that decisions look the key up afresh. */
	private void retire(KeyState state) {
		state.retired = true;
		this.states.remove(state.key, state);
	}

	/** Remove a retired state from the heap, its rank list and the counts. */
	private void detach(KeyState state) {
		heapRemove(state);
		unlink(state);
		this.size--;
		this.held.decrementAndGet();
	}

	private void link(KeyState state, int rank) {
		KeyState tail = this.tails[rank];
		state.listedRank = rank;
		state.previous = tail;
		state.next = null;
		if (tail == null) {
			this.heads[rank] = state;
			this.ranks |= 1L << rank;
		}
		else {
			tail.next = state;
		}
		this.tails[rank] = state;
	}

	private void unlink(KeyState state) {
		int rank = state.listedRank;
		KeyState previous = state.previous;
		KeyState next = state.next;
		if (previous == null) {
			this.heads[rank] = next;
		}
		else {
			previous.next = next;
		}
		if (next == null) {
			this.tails[rank] = previous;
		}
		else {
			next.previous = previous;
		}
		if (this.heads[rank] == null) {
			this.ranks &= ~(1L << rank);
		}
		state.previous = null;
		state.next = null;
	}

	private void heapAdd(KeyState state) {
		if (this.size == this.heap.length) {
			this.heap = Arrays.copyOf(this.heap, this.heap.length * 2);
		}
		this.heap[this.size] = state;
		siftUp(this.size);
	}

	/** Remove a state from the heap; the caller then decrements the size. */
	private void heapRemove(KeyState state) {
		int index = state.heapIndex;
		int last = this.size - 1;
		KeyState moved = this.heap[last];
		this.heap[last] = null;
		if (index != last) {
			this.heap[index] = moved;
			siftDown(index, last);
			if (this.heap[index] == moved) {
				siftUp(index);
			}
		}
	}

	private void siftUp(int index) {
		KeyState state = this.heap[index];
		while (index > 0) {
			int parent = (index - 1) >>> 1;
			KeyState above = this.heap[parent];
			if (above.listedExpiry <= state.listedExpiry) {
				break;
			}
			this.heap[index] = above;
			above.heapIndex = index;
			index = parent;
		}
		this.heap[index] = state;
		state.heapIndex = index;
	}

	private void siftDown(int index) {
		siftDown(index, this.size);
	}

	private void siftDown(int index, int size) {
		KeyState state = this.heap[index];
		while (true) {
			int child = 2 * index + 1;
			if (child >= size) {
				break;
			}
			if (child + 1 < size && this.heap[child + 1].listedExpiry < this.heap[child].listedExpiry) {
				child++;
			}
			KeyState below = this.heap[child];
			if (state.listedExpiry <= below.listedExpiry) {
				break;
			}
			this.heap[index] = below;
			below.heapIndex = index;
			index = child;
		}
		this.heap[index] = state;
		state.heapIndex = index;
	}

}
