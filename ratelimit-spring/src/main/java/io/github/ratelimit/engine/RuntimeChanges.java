package io.github.ratelimit.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import io.github.ratelimit.store.RateLimitStoreException;
import io.github.ratelimit.store.SharedChanges;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.context.SmartLifecycle;

/**
 * The changes made to policies while the application runs, from two places: an operator's, through the actuator
 * endpoint ({@link #change}), and the configuration's, when Spring Cloud's refresh rebinds {@code ratelimit.policies}
 * ({@link #reconfigure}); an operator's change wins over the configuration's for the values it sets.
 * <p>
 * On a store shared by instances ({@link SharedChanges}), an operator's change is kept in the store before it applies
 * here, and every instance reads the store's changes once a second, applying what changed: a change reaches the
 * fleet within about a second, and an instance that starts applies the changes kept before it serves its first
 * request. A store that cannot be read keeps the changes known; a kept change that is invalid here (another version
 * of the application) is logged and left out. In memory, a change applies to this instance.
 * <p>
 * Whoever can write to the store could otherwise change every policy, so a change read from the store applies only
 * if it sets the endpoint's attributes alone, says who made it, on which instance and when, is at most
 * {@value #MAX_CHANGE_LENGTH} characters long among at most {@value #MAX_CHANGES} kept, and, with a secret, carries
 * its HMAC-SHA256 signature; each one applied is logged at WARN with its author. A change refused is logged once at
 * WARN. Every change, from the endpoint or the store, is kept within bounds: a window from {@link #SHORTEST_WINDOW}
 * to {@link #LONGEST_WINDOW}, a limit and burst from 1 to {@value #MOST_UNITS}, and a limit no lower than the
 * policy's lease; so the store's keys, whose expiry follows the window, never outlive a dropped change by more than
 * a window.
 *
 * @since 0.3.0
 */
public final class RuntimeChanges implements SmartLifecycle {

	private static final Log logger = LogFactory.getLog(RuntimeChanges.class);

	/** How often the shared changes are read. */
	static final long POLL_MILLIS = 1_000;

	/** The attributes a change may set, the endpoint's: nothing else applies from the store. */
	public static final Set<String> ATTRIBUTES = Set.of("limit", "window", "burst", "algorithm", "mode", "enabled");

	/** The most changes read from the store: more is no operators' doing, and none of them is read. */
	public static final int MAX_CHANGES = 1_024;

	/** The longest change read from the store, encoded, in characters. */
	public static final int MAX_CHANGE_LENGTH = 1_024;

	/** The shortest window a change may set. */
	public static final Duration SHORTEST_WINDOW = Duration.ofSeconds(1);

	/** The longest window a change may set: the store's keys live about as long. */
	public static final Duration LONGEST_WINDOW = Duration.ofDays(31);

	/** The highest limit or burst a change may set. */
	public static final long MOST_UNITS = 1_000_000_000L;

	private final PolicyCatalog catalog;

	private final @Nullable SharedChanges shared;

	/** Who made each change, where and when, and its signature. */
	private final ChangeProvenance provenance;

	/** The changes last read from the store (or, in memory, made here), as the endpoint shows them. */
	private volatile Map<String, StoredChange> stored = Map.of();

	/** The operators' changes applied, as the store keeps them: by policy, by attribute, the text. */
	private final Map<String, Map<String, String>> operators = new ConcurrentHashMap<>();

	/** The configuration's values that a refresh changed, by policy. */
	private final Map<String, PolicyValues> refreshed = new ConcurrentHashMap<>();

	/** Kept changes that were invalid here, logged once each. */
	private final Set<String> refused = ConcurrentHashMap.newKeySet();

	private @Nullable ScheduledExecutorService poller;

	private volatile boolean storeFailureLogged;

	/**
	 * Create the changes of a catalogue's policies.
	 * @param catalog the policies
	 * @param shared where the changes are kept for every instance, or {@code null} for this instance alone
	 */
	public RuntimeChanges(PolicyCatalog catalog, @Nullable SharedChanges shared) {
		this(catalog, shared, null);
	}

	/**
	 * Create the changes of a catalogue's policies, signed with a secret that every instance sharing the store knows.
	 * @param catalog the policies
	 * @param shared where the changes are kept for every instance, or {@code null} for this instance alone
	 * @param secret signs the changes kept, and without whose signature none read from the store applies; or
	 * {@code null} (or empty) to trust the store's changes as they are
	 * @since 0.4.0
	 */
	public RuntimeChanges(PolicyCatalog catalog, @Nullable SharedChanges shared, @Nullable String secret) {
		this.catalog = catalog;
		this.shared = shared;
		this.provenance = new ChangeProvenance(secret);
	}

	/**
	 * Change how a policy counts from now on, on every instance sharing the store: the values given, as text by
	 * attribute ({@code limit}, {@code window}, {@code burst}, {@code algorithm}, {@code mode}, {@code enabled}),
	 * replacing an operator's earlier change; none to drop it. Made by the application itself.
	 * @param policy the policy's name
	 * @param values the values
	 * @return whether the policy exists
	 * @throws InvalidRateLimitPolicyException if a value is invalid or out of bounds, naming it; nothing is changed
	 * then
	 * @throws RateLimitStoreException if the shared store cannot keep the change; nothing is changed then
	 */
	public boolean change(String policy, Map<String, String> values) {
		return change(policy, values, "the application");
	}

	/**
	 * Change how a policy counts from now on, on every instance sharing the store, as {@link #change(String, Map)}
	 * does, kept with who made it, this instance and the time.
	 * @param policy the policy's name
	 * @param values the values
	 * @param author who made the change
	 * @return whether the policy exists
	 * @throws InvalidRateLimitPolicyException if a value is invalid or out of bounds, naming it; nothing is changed
	 * then
	 * @throws RateLimitStoreException if the shared store cannot keep the change; nothing is changed then
	 * @since 0.4.0
	 */
	public synchronized boolean change(String policy, Map<String, String> values, String author) {
		Map<String, String> change = values.isEmpty() ? Map.of() : this.provenance.stamped(policy, values, author);
		if (!this.catalog.checkChange(policy, layers(policy, change))) {
			return false;
		}
		if (this.shared != null) {
			this.shared.put(policy, change);
		}
		apply(policy, change);
		if (this.shared == null) {
			Map<String, StoredChange> stored = new TreeMap<>(this.stored);
			if (change.isEmpty()) {
				stored.remove(policy);
			}
			else {
				stored.put(policy, StoredChange.of(change, true, null));
			}
			this.stored = Map.copyOf(stored);
		}
		return true;
	}

	/**
	 * Apply the configuration's values after a refresh: the counting values of {@code ratelimit.policies.<name>}
	 * ({@code limit}, {@code window}, {@code burst}, {@code algorithm}, {@code mode}, {@code enabled}), under an
	 * operator's change.
	 * @param configured by policy name, the values configured now
	 */
	public synchronized void reconfigure(Map<String, PolicyValues> configured) {
		Set<String> names = new HashSet<>(this.refreshed.keySet());
		names.addAll(configured.keySet());
		for (String name : names) {
			PolicyValues values = configured.getOrDefault(name, PolicyValues.NONE);
			if (Objects.equals(values.values(), this.refreshed.getOrDefault(name, PolicyValues.NONE).values())) {
				continue;
			}
			PolicyValues before = this.refreshed.put(name, values);
			try {
				this.catalog.change(name, layers(name, this.operators.getOrDefault(name, Map.of())));
				logger.info("Rate limit policy '" + name + "' reconfigured by a refresh: " + values.values());
			}
			catch (InvalidRateLimitPolicyException ex) {
				restore(name, before);
				logger.warn("The refreshed configuration of rate limit policy '" + name + "' is invalid, so the "
						+ "policy counts as before: " + ex.getMessage());
			}
		}
	}

	private void restore(String name, @Nullable PolicyValues before) {
		if (before == null) {
			this.refreshed.remove(name);
		}
		else {
			this.refreshed.put(name, before);
		}
	}

	/**
	 * Read the changes kept in the shared store and apply those that differ from what this instance applied.
	 */
	void poll() {
		SharedChanges shared = this.shared;
		if (shared == null) {
			return;
		}
		// Read and applied under the lock, so that a change made here meanwhile is never undone by an older read.
		synchronized (this) {
			Map<String, Map<String, String>> kept;
			try {
				kept = shared.readAll();
				this.storeFailureLogged = false;
			}
			catch (RuntimeException ex) {
				if (!this.storeFailureLogged) {
					this.storeFailureLogged = true;
					logger.warn("Could not read the rate limit policies' changes from the store (" + ex.getMessage()
							+ "); keeping those known until it answers (logged once until it does)");
				}
				return;
			}
			if (kept.size() > MAX_CHANGES) {
				if (this.refused.add("count " + kept.size())) {
					logger.warn("The store keeps " + kept.size() + " rate limit policy changes, more than the "
							+ MAX_CHANGES + " operators could have made: none is read, and those known are kept");
				}
				return;
			}
			Set<String> names = new HashSet<>(this.operators.keySet());
			names.addAll(kept.keySet());
			Map<String, StoredChange> stored = new TreeMap<>();
			for (String name : names) {
				Map<String, String> values = kept.getOrDefault(name, Map.of());
				String refusal = values.isEmpty() ? null : this.provenance.refusal(name, values);
				if (refusal != null) {
					if (this.refused.add(name + values)) {
						logger.warn("The change of rate limit policy '" + name + "' kept in the store is refused, as "
								+ "not an operator's: " + refusal + "; it was " + values);
					}
				}
				else if (!values.equals(this.operators.getOrDefault(name, Map.of()))) {
					applyKept(name, values);
				}
				if (!values.isEmpty()) {
					stored.put(name, StoredChange.of(values, values.equals(this.operators.get(name)), refusal));
				}
			}
			this.stored = Map.copyOf(stored);
		}
	}

	private void applyKept(String name, Map<String, String> values) {
		try {
			if (this.catalog.checkChange(name, layers(name, values))) {
				apply(name, values);
				logger.warn("Rate limit policy '" + name + "' " + (values.isEmpty()
						? "back to its configuration, as its change was dropped from the store"
						: "changed at run time " + attributes(values) + " by " + values.get(ChangeProvenance.CHANGED_BY) + " on "
								+ values.get(ChangeProvenance.CHANGED_ON) + " at " + values.get(ChangeProvenance.CHANGED_AT) + ", as read from the store"));
			}
		}
		catch (InvalidRateLimitPolicyException ex) {
			if (this.refused.add(name + values)) {
				logger.warn("The change of rate limit policy '" + name + "' kept in the store is invalid for this "
						+ "instance, which leaves it out: " + ex.getMessage());
			}
		}
	}

	/** A change's attributes alone, without who made it (the parser refuses any a change may not set). */
	private static Map<String, String> attributes(Map<String, String> change) {
		Map<String, String> attributes = new LinkedHashMap<>(change);
		attributes.keySet().removeAll(ChangeProvenance.KEYS);
		return attributes;
	}

	private void apply(String policy, Map<String, String> values) {
		this.catalog.change(policy, layers(policy, values));
		if (values.isEmpty()) {
			this.operators.remove(policy);
		}
		else {
			this.operators.put(policy, values);
		}
	}

	/** An operator's values, then the configuration's refreshed ones: the first that sets an attribute wins. */
	private List<PolicyValues> layers(String policy, Map<String, String> operator) {
		List<PolicyValues> layers = new ArrayList<>(2);
		if (!operator.isEmpty()) {
			layers.add(new PolicyValues(PolicyValues.RUNTIME, new LinkedHashMap<>(attributes(operator))));
		}
		PolicyValues refreshed = this.refreshed.get(policy);
		if (refreshed != null && !refreshed.values().isEmpty()) {
			layers.add(refreshed);
		}
		return layers;
	}

	/**
	 * Return the operators' changes applied on this instance.
	 * @return by policy name, the values changed, as text
	 */
	public Map<String, Map<String, String>> operatorChanges() {
		Map<String, Map<String, String>> changes = new TreeMap<>();
		this.operators.forEach((policy, change) -> changes.put(policy, attributes(change)));
		return Map.copyOf(changes);
	}

	/**
	 * Return the changes the store keeps, as last read (about once a second), each with who made it and whether it
	 * applies here; in memory, those made on this instance.
	 * @return by policy name, the change
	 * @since 0.4.0
	 */
	public Map<String, StoredChange> storedChanges() {
		return this.stored;
	}

	@Override
	public synchronized void start() {
		if (this.shared == null || this.poller != null) {
			return;
		}
		if (!this.provenance.isSigned()) {
			logger.warn("ratelimit.changes.secret is not set, so the rate limit policies' changes kept in the shared "
					+ "store apply as they are: whoever can write to the store can change every policy. On a store "
					+ "shared beyond this application, set the secret on every instance");
		}
		poll(); // before the first request: an instance starts with the changes kept
		ScheduledExecutorService poller = Executors.newSingleThreadScheduledExecutor((task) -> {
			Thread thread = new Thread(task, "ratelimit-runtime-changes");
			thread.setDaemon(true);
			return thread;
		});
		poller.scheduleWithFixedDelay(this::pollSafely, POLL_MILLIS, POLL_MILLIS, TimeUnit.MILLISECONDS);
		this.poller = poller;
	}

	private void pollSafely() {
		try {
			poll();
		}
		catch (RuntimeException ex) {
			logger.warn("Could not apply the rate limit policies' changes: " + ex.getMessage(), ex);
		}
	}

	@Override
	public synchronized void stop() {
		ScheduledExecutorService poller = this.poller;
		if (poller != null) {
			poller.shutdownNow();
			this.poller = null;
		}
	}

	@Override
	public synchronized boolean isRunning() {
		return this.poller != null;
	}

	/** Before the web server starts taking requests. */
	@Override
	public int getPhase() {
		return 0;
	}

	/**
	 * A change kept in the store.
	 * @param values by attribute, the values it sets
	 * @param changedBy who made it, or {@code null} if it does not say
	 * @param changedOn the instance that kept it, or {@code null}
	 * @param changedAt when, or {@code null}
	 * @param signed whether it carries a signature
	 * @param applied whether it applies on this instance
	 * @param refused why it does not, if it was refused as no operator's, else {@code null}
	 * @since 0.4.0
	 */
	public record StoredChange(Map<String, String> values, @Nullable String changedBy, @Nullable String changedOn,
			@Nullable String changedAt, boolean signed, boolean applied, @Nullable String refused) {

		static StoredChange of(Map<String, String> change, boolean applied, @Nullable String refused) {
			Map<String, String> values = new LinkedHashMap<>(change);
			values.keySet().removeAll(List.of(ChangeProvenance.CHANGED_BY, ChangeProvenance.CHANGED_ON, ChangeProvenance.CHANGED_AT, ChangeProvenance.SIGNATURE));
			return new StoredChange(Collections.unmodifiableMap(values), change.get(ChangeProvenance.CHANGED_BY),
					change.get(ChangeProvenance.CHANGED_ON), change.get(ChangeProvenance.CHANGED_AT), change.containsKey(ChangeProvenance.SIGNATURE), applied, refused);
		}

	}

}
