package io.github.ratelimit.samples;

import io.github.ratelimit.samples.SampleApp.Stack;

/**
 * {@code sample-webflux-app}, WebFlux on Reactor Netty, keeps the sample API's HTTP contract.
 */
class SampleWebFluxAppOverHttpTests extends SampleApiContract {

	@Override
	Stack stack() {
		return Stack.WEBFLUX;
	}

}
