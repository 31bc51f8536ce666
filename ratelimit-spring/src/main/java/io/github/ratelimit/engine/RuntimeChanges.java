package io.github.ratelimit.engine;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
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
 *
 * @since 0.3.0
 */
public final class RuntimeChanges implements SmartLifecycle {

	private static final Log logger = LogFactory.getLog(RuntimeChanges.class);

	/** How often the shared changes are read. */
	static final long POLL_MILLIS = 1_000;

	private final PolicyCatalog catalog;

	private final @Nullable SharedChanges shared;

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
		this.catalog = catalog;
		this.shared = shared;
	}

	/**
	 * Change how a policy counts from now on, on every instance sharing the store: the values given, as text by
	 * attribute ({@code limit}, {@code window}, {@code burst}, {@code algorithm}, {@code mode}, {@code enabled}),
	 * replacing an operator's earlier change; none to drop it.
	 * @param policy the policy's name
	 * @param values the values
	 * @return whether the policy exists
	 * @throws InvalidRateLimitPolicyException if a value is invalid, naming it; nothing is changed then
	 * @throws RateLimitStoreException if the shared store cannot keep the change; nothing is changed then
	 */
	public synchronized boolean change(String policy, Map<String, String> values) {
		Map<String, String> copy = Map.copyOf(values);
		if (!this.catalog.checkChange(policy, layers(policy, copy))) {
			return false;
		}
		if (this.shared != null) {
			this.shared.put(policy, copy);
		}
		apply(policy, copy);
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
			Set<String> names = new HashSet<>(this.operators.keySet());
			names.addAll(kept.keySet());
			for (String name : names) {
				Map<String, String> values = kept.getOrDefault(name, Map.of());
				if (!values.equals(this.operators.getOrDefault(name, Map.of()))) {
					applyKept(name, values);
				}
			}
		}
	}

	private void applyKept(String name, Map<String, String> values) {
		try {
			if (this.catalog.checkChange(name, layers(name, values))) {
				apply(name, values);
				logger.info("Rate limit policy '" + name + "' " + (values.isEmpty() ? "back to its configuration"
						: "changed at run time " + values) + ", as another instance sharing the store said");
			}
		}
		catch (InvalidRateLimitPolicyException ex) {
			if (this.refused.add(name + values)) {
				logger.warn("The change of rate limit policy '" + name + "' kept in the store is invalid for this "
						+ "instance, which leaves it out: " + ex.getMessage());
			}
		}
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
			layers.add(new PolicyValues(PolicyValues.RUNTIME, new LinkedHashMap<>(operator)));
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
		return Map.copyOf(this.operators);
	}

	@Override
	public synchronized void start() {
		if (this.shared == null || this.poller != null) {
			return;
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

}
