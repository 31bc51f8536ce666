package io.github.ratelimit.store;

/**
 * Told of the resets made through any instance sharing a store (see {@link RateLimitStore#addResetListener}), so
 * that what an instance remembers locally of the store's answers is forgotten on every instance, not only on the one
 * an operator asked.
 *
 * @since 0.2.0
 */
public interface ResetListener {

	/**
	 * A key of a policy was reset, under every parameter set of the policy's name and variant.
	 * @param policy the policy's name
	 * @param variant the policy's variant ({@code ""} for the policy as declared)
	 * @param key the counter key, as the store holds it
	 */
	void onReset(String policy, String variant, String key);

	/**
	 * Every counter of the store was forgotten.
	 */
	void onClear();

}
