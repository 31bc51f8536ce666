package io.github.ratelimit.samples;

import io.github.ratelimit.samples.SampleApp.Stack;

/**
 * {@code sample-app}, Spring MVC on Tomcat, keeps the sample API's HTTP contract.
 */
class SampleAppOverHttpTests extends SampleApiContract {

	@Override
	Stack stack() {
		return Stack.MVC;
	}

}
