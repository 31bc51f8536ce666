package io.github.ratelimit.autoconfigure;

import java.util.LinkedHashMap;
import java.util.Map;

import io.github.ratelimit.engine.PolicyValues;
import io.github.ratelimit.engine.RuntimeChanges;

import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.cloud.context.environment.EnvironmentChangeEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.core.env.Environment;

/**
 * Applies {@code ratelimit.policies.<name>} again when Spring Cloud's refresh changes it (an
 * {@link EnvironmentChangeEvent}): the values a change at run time may set ({@link RuntimeChanges#ATTRIBUTES}) of
 * each policy whose configuration differs from the start, read from the environment as it now is. Other settings
 * (keys, costs, filters, stores) need a restart.
 */
final class RateLimitRefreshListener implements ApplicationListener<EnvironmentChangeEvent> {

	private static final String POLICIES = "ratelimit.policies";

	private final RuntimeChanges changes;

	private final Environment environment;

	private final Map<String, Map<String, Object>> atStart;

	RateLimitRefreshListener(RuntimeChanges changes, Environment environment) {
		this.changes = changes;
		this.environment = environment;
		this.atStart = counting(environment);
	}

	@Override
	public void onApplicationEvent(EnvironmentChangeEvent event) {
		if (event.getKeys().stream().noneMatch((key) -> key.startsWith(POLICIES + "."))) {
			return;
		}
		Map<String, Map<String, Object>> now = counting(this.environment);
		Map<String, PolicyValues> configured = new LinkedHashMap<>();
		now.forEach((name, values) -> {
			if (!values.equals(this.atStart.get(name))) {
				configured.put(name, new PolicyValues(POLICIES + "." + (name.contains(".") ? "[" + name + "]" : name),
						values));
			}
		});
		this.changes.reconfigure(configured);
	}

	/** By policy, the counting values configured. */
	private static Map<String, Map<String, Object>> counting(Environment environment) {
		Map<String, PolicyProperties> policies = Binder.get(environment)
			.bind(POLICIES, Bindable.mapOf(String.class, PolicyProperties.class))
			.orElse(Map.of());
		Map<String, Map<String, Object>> counting = new LinkedHashMap<>();
		policies.forEach((name, policy) -> {
			Map<String, Object> values = new LinkedHashMap<>(policy.toValues(POLICIES).values());
			values.keySet().retainAll(RuntimeChanges.ATTRIBUTES);
			counting.put(name, values);
		});
		return counting;
	}

}
