package io.github.ratelimit.samples;

import java.util.List;

import io.github.ratelimit.samples.SampleApp.Stack;

/**
 * {@code sample-app}, Spring MVC on Tomcat, keeps the sample API's HTTP contract.
 */
class SampleAppOverHttpTests extends SampleApiContract {

	@Override
	Stack stack() {
		return Stack.MVC;
	}

	/** The tenants' administration, which the sample leaves to the application's own protection. */
	@Override
	List<String> unlimitedHandlers() {
		return List.of("PUT /admin/tenants/{tenant} TenantAdminController#setLimit(String, LimitChange, String)");
	}

}
