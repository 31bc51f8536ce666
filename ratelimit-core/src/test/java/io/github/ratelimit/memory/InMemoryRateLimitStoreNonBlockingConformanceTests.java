package io.github.ratelimit.memory;

/**
 * The conformance suite through the store's non-blocking methods, which decide at once on the calling thread.
 */
class InMemoryRateLimitStoreNonBlockingConformanceTests extends InMemoryRateLimitStoreConformanceTests {

	@Override
	protected boolean nonBlocking() {
		return true;
	}

}
