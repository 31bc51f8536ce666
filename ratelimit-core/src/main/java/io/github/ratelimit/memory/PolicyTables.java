package io.github.ratelimit.memory;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import io.github.ratelimit.CalendarWindow;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.store.PolicyNames;
import org.jspecify.annotations.Nullable;

/**
 * The tables of an {@link InMemoryRateLimitStore}, one per place a policy's state is kept, within the bound on keys
 * in all: which table a configuration decides on, the count of keys held across tables, the table a new key takes its
 * slot from when the total is reached, and the idle tables dropped.
 */
final class PolicyTables {

	private final long maxKeys;

	private final int maxKeysPerPolicy;

	/**
	 * Every table, by the place its state is kept in ({@link #stateOf}): a change of a policy's limit or burst keeps
	 * its table, and so its counts.
	 */
	private final ConcurrentHashMap<String, PolicyTable> tables = new ConcurrentHashMap<>();

	/** The same tables by the configurations that decide on them: the lookup of every decision. */
	final ConcurrentHashMap<RateLimitPolicy, PolicyTable> byConfiguration = new ConcurrentHashMap<>();

	private final PolicyNames names = new PolicyNames();

	/** Keys held across policies, plus slots reserved by insertions in flight; never above {@code maxKeys}. */
	final AtomicLong held = new AtomicLong();

	/** Live keys evicted to make room for new ones. */
	final AtomicLong evictions = new AtomicLong();

	PolicyTables(long maxKeys, int maxKeysPerPolicy) {
		this.maxKeys = maxKeys;
		this.maxKeysPerPolicy = maxKeysPerPolicy;
	}

	Collection<PolicyTable> all() {
		return this.tables.values();
	}

	/**
	 * The table of a configuration: its own, or that of the configuration it changes (another limit or burst of the
	 * same name, variant, window and algorithm), which then counts under it, its counts carried over.
	 */
	PolicyTable table(RateLimitPolicy policy) {
		PolicyTable table = this.byConfiguration.get(policy);
		if (table != null) {
			return table;
		}
		List<RateLimitPolicy> replaced = new ArrayList<>(1);
		table = this.tables.compute(stateOf(policy), (state, current) -> {
			// Checked under the map's lock on the state, so that a table being forgotten cannot be checked between.
			this.names.check(policy);
			RateLimitPolicy previous = (current != null) ? current.adopt(policy) : null;
			if (previous != null) {
				replaced.add(previous);
				return current;
			}
			return new PolicyTable(policy, this.maxKeysPerPolicy, this.held, this.evictions);
		});
		// The configuration it replaces decides no more: a decision still in flight with it finds the table again.
		for (RateLimitPolicy previous : replaced) {
			if (!previous.equals(policy)) {
				this.byConfiguration.remove(previous, table);
			}
		}
		PolicyTable known = this.byConfiguration.putIfAbsent(policy, table);
		return (known != null) ? known : table;
	}

	/** The table a configuration's state is in, if any, without creating one. */
	@Nullable PolicyTable existing(RateLimitPolicy policy) {
		PolicyTable table = this.byConfiguration.get(policy);
		return (table != null) ? table : this.tables.get(stateOf(policy));
	}

	/** Where a configuration's state is kept: its name, variant, window and algorithm (the buckets are one meter). */
	private static String stateOf(RateLimitPolicy policy) {
		CalendarWindow calendar = policy.calendar();
		return policy.name() + '\0' + policy.variant() + '\0' + policy.windowMillis()
				+ ((calendar != null) ? calendar.period().name() : "") + '\0'
				+ (policy.algorithm().isBucket() ? "bucket" : policy.algorithm().name());
	}

	/** Drop the tables of policies that hold no key and remember nothing that still counts. */
	void dropIdle(long now) {
		for (PolicyTable table : this.tables.values()) {
			if (table.retireIfIdle(now)) {
				// Forgotten under the map's lock on the state, so that a new table for it cannot be checked between.
				this.tables.computeIfPresent(stateOf(table.policy), (state, current) -> {
					if (current != table) {
						return current;
					}
					this.names.forget(table.policy);
					return null;
				});
				this.byConfiguration.remove(table.policy, table);
			}
		}
	}

	/**
	 * Return the bytes of the arrays remembering evicted keys, across policies: what the store holds besides its
	 * keys' states.
	 * @return the bytes
	 */
	long evictedKeysBytes() {
		long bytes = 0;
		for (PolicyTable table : this.tables.values()) {
			bytes += table.evictedKeysBytes();
		}
		return bytes;
	}

	/**
	 * Return how many policies there is a table for: those with keys held or remembered.
	 * @return the number of policies
	 */
	int size() {
		return this.tables.size();
	}

	/**
	 * Reserve a slot for a new key of {@code table} in the count of keys held, making room if the total is reached:
	 * in {@code table} itself if it is at its own bound (it must evict anyway), else in the table holding the most
	 * keys.
	 */
	void reserve(PolicyTable table, long now) {
		while (true) {
			long held = this.held.get();
			if (held < this.maxKeys) {
				if (this.held.compareAndSet(held, held + 1)) {
					return;
				}
				continue;
			}
			PolicyTable victim = table;
			int size = table.size();
			if (!table.isFull()) {
				for (PolicyTable candidate : this.tables.values()) {
					int candidateSize = candidate.size();
					if (candidateSize > size) {
						victim = candidate;
						size = candidateSize;
					}
				}
			}
			// Declines if it shrank since: another thread made room meanwhile, and the choice is stale.
			if (!victim.evictOne(now, size)) {
				Thread.yield(); // or every slot is reserved by an insertion in flight: let one finish
			}
		}
	}

}
