// Package kubeconfig finds the cluster to talk to the way kubectl does, so
// that a program built on this library connects wherever kubectl would.
//
// It sits before the whole flow: it turns flags and files into the
// *rest.Config that reflector.NewTypedListerWatcher and every client need.
//
// # Loading rules
//
// In order, the first that applies wins:
//
//  1. --kubeconfig: that one file.
//  2. $KUBECONFIG: a list of files (":"-separated on Linux), merged; the
//     first file to set a value wins.
//  3. ~/.kube/config.
//  4. In a Pod with no kubeconfig: the Pod's service account
//     (KUBERNETES_SERVICE_HOST and the mounted token).
//
// --context picks a context of the loaded kubeconfig other than its
// current-context.
//
// # Usage
//
//	var conn kubeconfig.Flags
//	conn.Register(flag.CommandLine)
//	flag.Parse()
//	cfg, err := conn.Load()
//
// # Client limits
//
// A kubeconfig has no request rate, so the *rest.Config Load returns has
// QPS and Burst zero. client-go's rest reads zero as 5 requests a second
// with a burst of 10, and at its default verbosity says nothing of a
// request that waits for them unless it waits over a second.
// sharedinformer.NewFactory reads zero as 50 and 100 instead, shares one
// limiter among all the clients it makes (Factory.RESTClient's included),
// and logs a warning when requests were held back by it for a tenth of
// 10 s or more, at most once every 10 s. Set cfg.QPS and cfg.Burst before NewFactory to
// choose other limits; a client you build from cfg yourself gets
// client-go's 5 and 10 unless you do.
//
// These are client-go's clientcmd rules (NewDefaultClientConfigLoadingRules
// and a deferred, non-interactive client config); this package only names
// them, registers the flags, and says what to do when nothing is found.
package kubeconfig
