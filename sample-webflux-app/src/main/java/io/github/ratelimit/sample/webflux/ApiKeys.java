package io.github.ratelimit.sample.webflux;

import java.util.Map;

/**
 * The API keys this API issued, each with its plan: what a real application looks up in its database, after it
 * authenticated the caller. A key not in the table is no key at all, so a client cannot choose its plan, nor buy a
 * fresh quota by inventing keys: its requests are keyed by its address, on the default plan.
 */
public class ApiKeys {

	private final Map<String, String> plans;

	ApiKeys(Map<String, String> plans) {
		this.plans = Map.copyOf(plans);
	}

	/**
	 * Return the key if this API issued it, else {@code null}: what the keyed policies' expressions read.
	 * @param key the key the client sent, or {@code null}
	 * @return the key, or {@code null}
	 */
	public String issued(String key) {
		return (key != null && this.plans.containsKey(key)) ? key : null;
	}

	/**
	 * Return the plan of an issued key.
	 * @param key the key the client sent, or {@code null}
	 * @return the plan, or {@code null} for a key this API did not issue (the default plan then applies)
	 */
	public String plan(String key) {
		return (key != null) ? this.plans.get(key) : null;
	}

}
