package io.github.ratelimit.memory;

import java.security.SecureRandom;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.CalendarWindow;
import io.github.ratelimit.RateLimitPolicy;
import org.jspecify.annotations.Nullable;

/**
 * What the keys evicted from one policy's table held against their clients, remembered in bounded memory, so that a
 * key that comes back resumes where it was, or further on, but never afresh.
 * <p>
 * Two tiers, both under a SipHash-1-3 of the key with a secret drawn from {@link SecureRandom} per table, so that
 * clients can neither aim at another client's entries nor compute collisions:
 * <ol>
 * <li><em>Recent evictions</em>, exact: a set-associative table of buckets of {@value #WAYS} entries, each the
 * key's 64-bit hash, the units it held and how often it was evicted; a full bucket gives up the entry of the key
 * evicted least often (see {@link #leastLost}). A key found here is charged exactly what it held.
 * <li><em>The floor</em>: a count-min sketch of maxima, {@value #ROWS} rows, which an entry given up by the first
 * tier raises to all the units its key held, those a floor charged it with on its return included. A key not found
 * in the first tier is charged the least of its cells.
 * </ol>
 * So every charge is at least what the key held when it was last evicted: each evict-return cycle carries the whole
 * of what the key used, and no schedule of evictions lets a key forget any of it. The price is that the floor also
 * carries what collisions charged a key: a key never seen is charged the least of its cells, which a flood of keys
 * that each take units raises, by about the units given up per column (see {@code docs/reliability.md}).
 * <p>
 * Entries lapse by generations of the policy's <em>hold</em> ({@link #holdMillis}), the longest a state stays from
 * fresh after its last admission: the current generation and the previous one count, so an entry lives at least
 * one hold (by then its state would have been fresh) and at most two. Under {@link Algorithm#FIXED} the generations
 * are the windows and only the current one counts.
 * <p>
 * Not thread-safe: guarded by the table's monitor.
 */
final class EvictedKeys {

	static final int ROWS = 4;

	static final int WAYS = 4;

	private static final int MIN_WIDTH = 64;

	private static final int MAX_WIDTH = 1 << 20;

	/** How many resets are remembered, so that a reset key's given-up entry does not charge it again. */
	private static final int MAX_PARDONS = 1_024;

	private static final SecureRandom random = new SecureRandom();

	private final long holdMillis;

	/** The policy's calendar window, whose window time the generations are counted on, if it has one. */
	private final @Nullable CalendarWindow calendar;

	/** Whether an entry is void once its generation has passed: fixed windows, which the generations align with. */
	private final boolean windowsAligned;

	/** Units per step of a stored count, so that an {@code int} holds any capacity, rounding up. */
	private final long unitsPerStep;

	private final long k0;

	private final long k1;

	// The recent evictions: slot (bucket · WAYS + way), oldest way first; a hash of 0 is an empty slot.

	private final int bucketMask;

	private final long[] hashes;

	private final int[] generations;

	private final int[] steps;

	/** How many times the entry's key was evicted while the entry lived: keys that keep coming back stay. */
	private final int[] recurrences;

	// The floor, one array of ROWS · width cells per generation.

	private final int columnMask;

	private int[] current;

	private int[] previous;

	private boolean currentUsed;

	private boolean previousUsed;

	private long generation = Long.MIN_VALUE;

	/** The generation of the last entry, to know when the memory holds nothing that counts. */
	private long lastRecorded = Long.MIN_VALUE;

	/** Keys reset since: the floor may still hold their units from before. */
	private final Map<String, Boolean> pardons = new LinkedHashMap<>(16, 0.75f, false) {

		@Override
		protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
			return size() > MAX_PARDONS;
		}

	};

	/**
	 * Create the memory of a policy whose table holds about {@code keys} keys: 2 to 4 recent evictions per key (so
	 * that a key's entry is given up only once about twice the table has been evicted after it), and a floor 1 to 2
	 * columns per key wide.
	 * @param policy the policy
	 * @param keys the keys its table holds
	 */
	EvictedKeys(RateLimitPolicy policy, int keys) {
		this.holdMillis = holdMillis(policy);
		this.calendar = policy.calendar();
		this.windowsAligned = policy.algorithm() == Algorithm.FIXED;
		this.unitsPerStep = Math.max(1, IntMath.ceilDiv(policy.capacity(), Integer.MAX_VALUE));
		int columns = powerOfTwoAtLeast(Math.max(MIN_WIDTH, Math.min(MAX_WIDTH, keys)));
		this.columnMask = columns - 1;
		this.current = new int[ROWS * columns];
		this.previous = new int[ROWS * columns];
		int buckets = powerOfTwoAtLeast(Math.max(MIN_WIDTH / WAYS, Math.min(MAX_WIDTH, (keys + 1) / 2)));
		this.bucketMask = buckets - 1;
		this.hashes = new long[buckets * WAYS];
		this.generations = new int[buckets * WAYS];
		this.steps = new int[buckets * WAYS];
		this.recurrences = new int[buckets * WAYS];
		this.k0 = random.nextLong();
		this.k1 = random.nextLong();
	}

	private static int powerOfTwoAtLeast(int n) {
		int power = Integer.highestOneBit(n);
		return (power < n) ? power * 2 : power;
	}

	/**
	 * Return the longest a key's state of this policy stays from fresh after its last admission: the window for a
	 * fixed window and a sliding log, two windows for the sliding counter (the previous window still weighs), and
	 * the time to refill the whole bucket for the buckets.
	 * @param policy the policy
	 * @return the hold in milliseconds, at least 1
	 */
	static long holdMillis(RateLimitPolicy policy) {
		return switch (policy.algorithm()) {
			case FIXED, SLIDING_LOG, CONCURRENCY -> policy.windowMillis();
			case SLIDING_COUNTER -> 2 * policy.windowMillis();
			case TOKEN_BUCKET, LEAKY_BUCKET ->
				Math.max(1, IntMath.ceilDiv(policy.burst() * policy.unitsPerToken(), policy.unitsPerMilli()));
		};
	}

	/**
	 * Remember that {@code key} was evicted holding {@code units} units against its client.
	 * @param key the key
	 * @param units the units held, at most the capacity
	 * @param now the current time
	 */
	void record(String key, long units, long now) {
		this.pardons.remove(key);
		if (units <= 0) {
			return;
		}
		rotate(now);
		this.lastRecorded = this.generation;
		long hash = hash(key);
		int first = ((int) hash & this.bucketMask) * WAYS;
		int newest = first + WAYS - 1;
		// The way to free: the key's own entry, else an empty or lapsed one, else one given up to the floor.
		int freed = find(first, hash);
		int recurrences = (freed < 0) ? 1 : Math.max(this.recurrences[freed], this.recurrences[freed] + 1);
		if (freed < 0) {
			freed = first;
			while (freed <= newest && this.hashes[freed] != 0 && isLive(this.generations[freed])) {
				freed++;
			}
			if (freed > newest) {
				freed = leastLost(first);
				raiseFloor(this.hashes[freed], this.steps[freed], this.generations[freed]);
			}
		}
		for (int slot = freed; slot < newest; slot++) {
			move(slot + 1, slot);
		}
		int held = steps(units);
		this.hashes[newest] = hash;
		this.generations[newest] = (int) this.generation;
		this.steps[newest] = held;
		this.recurrences[newest] = recurrences;
	}

	/**
	 * Return what {@code key} must be charged with on its return, and forget a pardon of the key.
	 * @param key the key
	 * @param now the current time
	 * @return the units to charge, at most the capacity rounded up to a step
	 */
	long charge(String key, long now) {
		if (this.pardons.remove(key) != null) {
			return 0;
		}
		return estimate(key, now);
	}

	/**
	 * Return what {@code key} would be charged with on its return, as {@link #charge} would, without forgetting a
	 * pardon.
	 * @param key the key
	 * @param now the current time
	 * @return the units to charge
	 */
	long estimate(String key, long now) {
		if (this.pardons.containsKey(key)) {
			return 0;
		}
		rotate(now);
		long hash = hash(key);
		int slot = find(((int) hash & this.bucketMask) * WAYS, hash);
		int steps = (slot >= 0) ? this.steps[slot] : floor(hash);
		return steps * this.unitsPerStep;
	}

	/**
	 * Return the bytes of this memory's arrays, fixed when it was created: 20 per recent eviction (hash, generation,
	 * units, recurrences) and 32 per floor column ({@value #ROWS} rows of two generations of 4 bytes). The pardons,
	 * at most {@value #MAX_PARDONS} keys, come on top.
	 * @return the bytes
	 */
	long arrayBytes() {
		return 20L * this.hashes.length + 4L * (this.current.length + this.previous.length);
	}

	/**
	 * Return whether nothing remembered counts any more at {@code now}: every entry's generation has passed.
	 * @param now the current time
	 * @return whether the memory can be dropped
	 */
	boolean isLapsed(long now) {
		long generation = generationOf(now);
		return this.lastRecorded == Long.MIN_VALUE || generation > this.lastRecorded + (this.windowsAligned ? 0 : 1);
	}

	/**
	 * Forget what {@code key} held before now: an operator reset it.
	 * @param key the key
	 */
	void pardon(String key) {
		long hash = hash(key);
		int slot = find(((int) hash & this.bucketMask) * WAYS, hash);
		if (slot >= 0) {
			this.hashes[slot] = 0;
		}
		this.pardons.put(key, Boolean.TRUE);
	}

	/**
	 * The entry of a full bucket to give up: the one whose key was evicted the fewest times while it lived (a key
	 * that keeps coming back is what an attacker aims at, and a flood's keys come once); among those, the oldest.
	 * Giving an entry up loses none of its units, which the floor keeps, only the exactness of its key's charge.
	 */
	private int leastLost(int first) {
		int least = first;
		for (int slot = first + 1; slot < first + WAYS; slot++) {
			if (this.recurrences[slot] < this.recurrences[least]) {
				least = slot;
			}
		}
		return least;
	}

	/** The slot of a live entry of {@code hash} in the bucket starting at {@code first}, or -1. */
	private int find(int first, long hash) {
		for (int slot = first; slot < first + WAYS; slot++) {
			if (this.hashes[slot] == hash && isLive(this.generations[slot])) {
				return slot;
			}
		}
		return -1;
	}

	/** Whether an entry of the given generation still counts: of this one, or the previous if not aligned. */
	private boolean isLive(int generation) {
		int age = (int) this.generation - generation;
		return age == 0 || (age == 1 && !this.windowsAligned);
	}

	private void move(int from, int to) {
		this.hashes[to] = this.hashes[from];
		this.generations[to] = this.generations[from];
		this.steps[to] = this.steps[from];
		this.recurrences[to] = this.recurrences[from];
	}

	/** Raise the floor cells of a given-up entry to the steps its key held, in the generation it was recorded in. */
	private void raiseFloor(long hash, int held, int generation) {
		if (held <= 0) {
			return;
		}
		int[] cells;
		if (generation == (int) this.generation) {
			cells = this.current;
			this.currentUsed = true;
		}
		else {
			cells = this.previous;
			this.previousUsed = true;
		}
		for (int row = 0; row < ROWS; row++) {
			int cell = cell(hash, row);
			if (cells[cell] < held) {
				cells[cell] = held;
			}
		}
	}

	/** The least of a key's cells, in each live generation, in steps. */
	private int floor(long hash) {
		if (!this.currentUsed && (this.windowsAligned || !this.previousUsed)) {
			return 0;
		}
		int current = Integer.MAX_VALUE;
		int previous = Integer.MAX_VALUE;
		for (int row = 0; row < ROWS; row++) {
			int cell = cell(hash, row);
			current = Math.min(current, this.current[cell]);
			previous = Math.min(previous, this.previous[cell]);
		}
		return this.windowsAligned ? current : Math.max(current, previous);
	}

	private int steps(long units) {
		return (int) Math.min(Integer.MAX_VALUE, IntMath.ceilDiv(units, this.unitsPerStep));
	}

	/**
	 * The index of a key's floor cell in a row: the rows' columns are {@code h1 + row·h2}, from the two halves of a
	 * second hash of the key (the first half also chooses its bucket of recent evictions).
	 */
	private int cell(long hash, int row) {
		long mixed = hash * 0x9E3779B97F4A7C15L;
		int h1 = (int) (mixed >>> 32);
		int h2 = (int) mixed | 1;
		return row * (this.columnMask + 1) + ((h1 + row * h2) & this.columnMask);
	}

	/** The generation of a time: counted on a calendar window's window time, so that FIXED's are its periods. */
	private long generationOf(long now) {
		CalendarWindow calendar = this.calendar;
		return Math.floorDiv((calendar != null) ? calendar.windowTime(now) : now, this.holdMillis);
	}

	/** Move to the generation of {@code now}; a clock that went back stays in the later generation. */
	private void rotate(long now) {
		long generation = generationOf(now);
		if (generation <= this.generation) {
			return;
		}
		if (generation == this.generation + 1) {
			int[] recycled = this.previous;
			if (this.previousUsed) {
				Arrays.fill(recycled, 0);
			}
			this.previous = this.current;
			this.previousUsed = this.currentUsed;
			this.current = recycled;
		}
		else {
			if (this.currentUsed) {
				Arrays.fill(this.current, 0);
			}
			if (this.previousUsed) {
				Arrays.fill(this.previous, 0);
			}
			this.previousUsed = false;
		}
		this.currentUsed = false;
		this.generation = generation;
	}

	/** SipHash-1-3 of the key's UTF-16 code units, four to a word, under this table's secret key. */
	private long hash(String key) {
		SipHash sip = new SipHash(this.k0, this.k1);
		int length = key.length();
		int i = 0;
		for (; i + 4 <= length; i += 4) {
			sip.compress(key.charAt(i) | ((long) key.charAt(i + 1) << 16) | ((long) key.charAt(i + 2) << 32)
					| ((long) key.charAt(i + 3) << 48));
		}
		long last = ((long) (length & 0xFF)) << 56;
		for (int shift = 0; i < length; i++, shift += 16) {
			last |= ((long) key.charAt(i)) << shift;
		}
		sip.compress(last);
		long hash = sip.finish();
		return (hash != 0) ? hash : 1; // 0 marks an empty slot
	}

	/** The state of SipHash-1-3: one round per word, three to finish. */
	private static final class SipHash {

		private long v0;

		private long v1;

		private long v2;

		private long v3;

		SipHash(long k0, long k1) {
			this.v0 = k0 ^ 0x736f6d6570736575L;
			this.v1 = k1 ^ 0x646f72616e646f6dL;
			this.v2 = k0 ^ 0x6c7967656e657261L;
			this.v3 = k1 ^ 0x7465646279746573L;
		}

		void compress(long word) {
			this.v3 ^= word;
			round();
			this.v0 ^= word;
		}

		long finish() {
			this.v2 ^= 0xff;
			round();
			round();
			round();
			return this.v0 ^ this.v1 ^ this.v2 ^ this.v3;
		}

		private void round() {
			this.v0 += this.v1;
			this.v1 = Long.rotateLeft(this.v1, 13) ^ this.v0;
			this.v0 = Long.rotateLeft(this.v0, 32);
			this.v2 += this.v3;
			this.v3 = Long.rotateLeft(this.v3, 16) ^ this.v2;
			this.v0 += this.v3;
			this.v3 = Long.rotateLeft(this.v3, 21) ^ this.v0;
			this.v2 += this.v1;
			this.v1 = Long.rotateLeft(this.v1, 17) ^ this.v2;
			this.v2 = Long.rotateLeft(this.v2, 32);
		}

	}

}
