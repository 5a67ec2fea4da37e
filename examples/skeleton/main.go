// Command skeleton, a whole controller to copy, keeps a Secret like each ConfigMap labelled app=demo until it or its label goes.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/events"
	"github.com/listwatch/informer/kubeconfig"
	"github.com/listwatch/informer/readyourwrites"
	si "github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/workqueue"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM) // Ctrl-C, or a Pod's stop
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil && !errors.Is(err, flag.ErrHelp) && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "skeleton:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("skeleton", flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprintln(fs.Output(), "skeleton: a Secret per app=demo ConfigMap"); fs.PrintDefaults() }
	var conn kubeconfig.Flags // --kubeconfig and --context, as kubectl has them
	conn.Register(fs)
	ns := fs.String("namespace", "default", "the namespace to work in")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg, err := conn.Load()
	if err != nil {
		return err
	}
	defer fmt.Fprintln(os.Stderr, "skeleton: stopped")
	return control(ctx, cfg, *ns, nil)
}

// newFactory is si.NewFactory; a test replaces it to check the caches after each reconcile.
var newFactory = si.NewFactory

// control runs the controller in namespace ns until ctx ends; trace, if set,
// sees its queue's events (the simulator's test watches reconciles so).
func control(ctx context.Context, cfg *rest.Config, ns string, trace informer.TraceHook) error {
	scheme := runtime.NewScheme() // the Go types the factory reads and writes
	if err := corev1.AddToScheme(scheme); err != nil {
		return err
	}
	factory, err := newFactory(cfg, si.FactoryOptions{Scheme: scheme})
	if err != nil {
		return err
	}
	configMaps, err1 := si.InformerFor[*corev1.ConfigMap](ctx, factory, si.InNamespace(ns), si.WithLabels("app=demo"))
	secrets, err2 := si.InformerFor[*corev1.Secret](ctx, factory, si.InNamespace(ns), si.WithLabels("app=demo")) // ours carry it
	client, err3 := factory.RESTClient(corev1.SchemeGroupVersion)                                                // for the writes
	guard, err4 := readyourwrites.New(readyourwrites.Options{Name: "skeleton"})                                  // holds a key until the cache shows its writes
	recorder, err5 := events.New(cfg, events.Options{Controller: "listwatch.dev/skeleton", Scheme: scheme})      // what kubectl describe shows
	if err := errors.Join(err1, err2, err3, err4, err5); err != nil {
		return err
	}
	queue, ours := workqueue.New(workqueue.Options[informer.Key]{Trace: trace}), readyourwrites.Track(guard, secrets) // ours: our Secret writes, per key
	_, err1 = configMaps.AddEventHandler(si.EnqueueKey[*corev1.ConfigMap](queue))
	_, err2 = secrets.AddEventHandler(si.EnqueueOwner[*corev1.Secret](queue, corev1.SchemeGroupVersion.WithKind("ConfigMap").GroupKind()))
	if err := errors.Join(err1, err2); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx) // on every way out: stop the informers and the recorder, wait for them
	var sending sync.WaitGroup
	factory.Start(ctx)
	sending.Go(func() { _ = recorder.Run(ctx) })
	defer func() { cancel(); factory.Wait(); sending.Wait(); queue.ShutDown() }()
	if err := factory.WaitForCacheSync(ctx); err != nil {
		return err // never act on a partial cache
	}
	reconcile := func(ctx context.Context, key informer.Key) (workqueue.Result, error) { // Secret key := ConfigMap key
		cm, err := configMaps.Lister().Namespace(key.Namespace).Get(key.Name)
		secret, secretErr := secrets.Lister().Namespace(key.Namespace).Get(key.Name)
		if err == nil && secretErr != nil { // no Secret with our label: create one
			owner := metav1.NewControllerRef(cm, corev1.SchemeGroupVersion.WithKind("ConfigMap"))
			meta := metav1.ObjectMeta{Name: key.Name, Labels: map[string]string{"app": "demo"}, OwnerReferences: []metav1.OwnerReference{*owner}}
			err = ours.Write(ctx, key, client.Post().Namespace(key.Namespace).Resource("secrets").Body(&corev1.Secret{ObjectMeta: meta, StringData: cm.Data}), &corev1.Secret{})
			if apierrors.IsAlreadyExists(err) { // one without the label, so not in our cache: read it from the server
				secret = &corev1.Secret{}
				err = client.Get().Namespace(key.Namespace).Resource("secrets").Name(key.Name).Do(ctx).Into(secret)
			}
		}
		gone, goneErr := ownerGone(ctx, client, secret, cm)
		switch {
		case goneErr != nil: // could not look up another owner: retried with backoff
			err = goneErr
		case gone && secret.DeletionTimestamp != nil: // being deleted already (a finalizer holds it): look again in a second, not a DELETE each time
			return workqueue.Result{RequeueAfter: time.Second}, nil // no backoff to outgrow the hold, nor an event if it is not in our cache
		case gone: // deleted, unlabelled, or made anew, and no other owner left: its Secret goes too
			that := &metav1.DeleteOptions{Preconditions: metav1.NewUIDPreconditions(string(secret.UID))} // that Secret, no newer one
			err = ours.Delete(ctx, key, key, client.Delete().Namespace(key.Namespace).Resource("secrets").Name(key.Name).Body(that))
			if err == nil && cm != nil { // requeue, simpler than a second create here: a Secret read by GET, not in our cache, leaves no event
				return workqueue.Result{RequeueAfter: time.Millisecond}, nil // the next reconcile creates cm's own Secret
			}
		case err != nil || secret == nil: // neither exists, a failure, or created just now
		case !metav1.IsControlledBy(secret, cm): // another owner's or nobody's: not ours to change, and retrying cannot help
			err = workqueue.Terminal(fmt.Errorf("secret %s exists and ConfigMap UID %s does not control it", key, cm.UID))
			_ = recorder.Eventf(cm, events.Warning, "SecretNotOurs", "Create", "Secret %s exists and this ConfigMap does not control it: delete it, or rename the ConfigMap", key.Name) // errors only for bad arguments
		case secret.Labels["app"] != "demo" || !maps.EqualFunc(secret.Data, cm.Data, func(b []byte, s string) bool { return string(b) == s }):
			fixed := secret.DeepCopy() // never modify the cache's copy
			metav1.SetMetaDataLabel(&fixed.ObjectMeta, "app", "demo")
			fixed.Data, fixed.StringData = nil, maps.Clone(cm.Data) // the ConfigMap's map is the cache's
			err = ours.Write(ctx, key, client.Put().Namespace(key.Namespace).Resource("secrets").Name(key.Name).Body(fixed), fixed)
			if apierrors.IsInvalid(err) && secret.Immutable != nil && *secret.Immutable { // someone made it immutable: no update can fix its data (422), and undoing their choice is not ours
				err = workqueue.Terminal(fmt.Errorf("secret %s is immutable and its data is not ConfigMap %s's: %w", key, key, err))
				_ = recorder.Eventf(cm, events.Warning, "SecretImmutable", "Update", "Secret %s is immutable and its data is out of date: delete it to have it made anew", key.Name)
			}
		}
		if cm == nil && apierrors.IsNotFound(err) { // gone already, or never there: nothing left to do
			err = nil
		}
		return workqueue.Result{}, err // any other error is retried with backoff
	}
	workqueue.Run(ctx, queue, reconcile, workqueue.RunOptions[informer.Key]{Workers: 2, Gate: guard}) // until ctx ends
	return nil
}

// ownerGone: secret's controller is the v1 ConfigMap of its name, gone from our cache (deleted, unlabelled, made anew), and
// each other owner is gone too, as a garbage collector asks: one of another kind we cannot look up, so we take it to exist.
func ownerGone(ctx context.Context, client rest.Interface, secret *corev1.Secret, cm *corev1.ConfigMap) (bool, error) {
	if secret == nil {
		return false, nil
	}
	c := metav1.GetControllerOf(secret) // nil unless one owner reference says controller: true
	if c == nil || c.APIVersion != "v1" || c.Kind != "ConfigMap" || c.Name != secret.Name || cm != nil && c.UID == cm.UID {
		return false, nil
	}
	for _, other := range secret.OwnerReferences {
		if other.UID == c.UID { // the controller itself
			continue
		}
		if other.APIVersion != "v1" || other.Kind != "ConfigMap" {
			return false, nil // we cannot look it up: taken to exist
		}
		if len(validation.IsDNS1123Subdomain(other.Name)) > 0 {
			continue // a name no ConfigMap can have: none exists (the client would refuse the GET)
		}
		found := &corev1.ConfigMap{} // in our cache only if labelled app=demo: ask the server
		err := client.Get().Namespace(secret.Namespace).Resource("configmaps").Name(other.Name).Do(ctx).Into(found)
		if err == nil && found.UID == other.UID || err != nil && !apierrors.IsNotFound(err) {
			return false, err // it exists (the same object, by UID), or we cannot tell
		}
	}
	return true, nil
}
